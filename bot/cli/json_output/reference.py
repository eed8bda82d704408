"""The reference of every `--json` document, docs/json.md, written from the documents' models:
`python -m bot.cli.json_output.reference` prints it (a test fails when the file is stale)."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
from datetime import datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from bot.cli.json_output import Document
from bot.cli.json_output.calibration import CalibrationCheckDocument, CalibrationDocument
from bot.cli.json_output.compare import CompareDocument
from bot.cli.json_output.digest import DigestDocument
from bot.cli.json_output.history import BudgetDocument, HistoryDocument, RunsDocument, StatsDocument
from bot.cli.json_output.judges import JudgesCompareDocument
from bot.cli.json_output.review import ReviewDocument
from bot.cli.json_output.rubrics import RubricsDocument

# Each command with --json, in the order of the README's commands, and the model of its document.
DOCUMENTS: list[tuple[str, type[Document]]] = [
    ("runs", RunsDocument), ("history", HistoryDocument), ("stats", StatsDocument), ("digest", DigestDocument),
    ("budget", BudgetDocument), ("review", ReviewDocument), ("calibration", CalibrationDocument),
    ("calibration check", CalibrationCheckDocument), ("compare", CompareDocument),
    ("judges compare", JudgesCompareDocument), ("rubrics", RubricsDocument),
]
SCALARS = {int: "integer", float: "number", str: "string", bool: "true or false", datetime: "time"}


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    return title.lower().replace(" ", "-")


def type_text(annotation: Any) -> str:
    """How a field's type reads: "number or null", "list of [Kappa](#kappa)", "[low, high]"."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a time, written as ISO 8601 in UTC
        return type_text(args[0])
    if origin in (Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        return " or ".join(type_text(arg) for arg in kept) + (" or null" if len(kept) < len(args) else "")
    if origin is list:
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return f"object: name → {type_text(args[1])}"
    if origin is tuple:
        return "[low, high]"
    if origin is Literal:
        return " or ".join(f'"{arg}"' for arg in args)
    if isinstance(annotation, type) and issubclass(annotation, Document):
        return f"[{annotation.__name__}](#{anchor(annotation.__name__)})"
    return SCALARS[annotation]


def parts_of(model: type[Document]) -> list[type[Document]]:
    """The models a document's keys hold, at any depth, each once, in the order they are met."""
    found: list[type[Document]] = []

    def visit(annotation: Any) -> None:
        if not (isinstance(annotation, type) and issubclass(annotation, Document)):
            for arg in get_args(annotation):  # list[X], X | None, dict[str, X]
                visit(arg)
        elif annotation not in found:
            found.append(annotation)
            for field in annotation.model_fields.values():
                visit(field.annotation)

    for field in model.model_fields.values():
        visit(field.annotation)
    return found


def key_meanings(model: type[Document]) -> dict[str, str]:
    """What each key of a model means: the docstring under its field, in the model's class or the one it extends."""
    meanings: dict[str, str] = {}
    for cls in reversed(model.__mro__[: model.__mro__.index(Document)]):
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        assert isinstance(body, ast.ClassDef)
        for field, under in zip(body.body, body.body[1:], strict=False):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and isinstance(under, ast.Expr)
                    and isinstance(under.value, ast.Constant) and isinstance(under.value.value, str)):
                meanings[field.target.id] = " ".join(under.value.value.split())
    return meanings


def keys_table(model: type[Document]) -> list[str]:
    """A model's keys as a Markdown table: key, type, meaning."""
    lines = ["| key | type | meaning |", "|---|---|---|"]
    meanings = key_meanings(model)
    for name, field in model.model_fields.items():
        meaning = meanings.get(name, "").replace("|", "\\|")
        lines.append(f"| `{name}` | {type_text(field.annotation)} | {meaning} |")
    return lines


def markdown() -> str:
    """The reference of every document, as Markdown."""
    out = ["# JSON output", "",
           "Written from judgebot's own models by `python -m bot.cli.json_output.reference > docs/json.md`; a test",
           "fails when it is stale. Back to the [README](../README.md); every option: [cli.md](cli.md).", "",
           "The reading commands take `--json`: they print one JSON document on standard output (UTF-8) instead of",
           "tables, and nothing else; anything else they say (a warning, a hint, a history just created) goes to",
           "standard error. The keys below are stable: a key may be added, none is renamed or removed without a",
           "note in the changelog. Keys are snake_case; a count says what it counts in its name (`cases`,",
           "`labels`, `pairs`, `rows`); shares and rates are numbers from 0 to 1, headlines from 0 to 100; an",
           "interval is `[low, high]` (95 %); a p-value is a number; times are ISO 8601 in UTC",
           "(`2026-11-11T12:00:00Z`); a figure that cannot be computed is `null`. Texts from outside (questions,",
           "model names) are given as they are, JSON-escaped.", "",
           "```sh", "judgebot stats --json | jq '.figures[] | {model, rubric, cases, pass_rate}'", "```"]
    parts: list[type[Document]] = []
    for command, model in DOCUMENTS:
        out += ["", f"## {command}", "", " ".join((model.__doc__ or "").split()), "", *keys_table(model)]
        parts += [part for part in parts_of(model) if part not in parts]
    out += ["", "## Parts", "", "The objects the documents above hold, each documented once."]
    for part in parts:
        out += ["", f"### {part.__name__}", "", " ".join((part.__doc__ or "").split()), "", *keys_table(part)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
