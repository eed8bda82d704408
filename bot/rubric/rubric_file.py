"""One rubric file: read and validated strictly, every problem found named with its field, and the names people type
for it."""

from __future__ import annotations

import re
import types
import typing
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from bot.errors import RubricError
from bot.rubric.formulas import did_you_mean
from bot.rubric.model import NAME_PATTERN, Rubric, describe
from bot.yaml_text import load_yaml, yaml_problem

# Words that /judge, the message with a shared file and the judgebot command take as their own, with those planned
# for samples, juries, labels, calibration, budgets and batches: a rubric called so could never be reached.
RESERVED_WORDS = frozenset({
    "help", "rubrics", "history", "stats", "default", "digest", "none", "off", "clear",  # /judge, /judge default
    "rubric", "model",  # `rubric: NAME` and `model: NAME` with a shared file
    "serve", "judge", "resume", "runs", "list", "check",  # judgebot COMMAND, judgebot rubrics list|check
    "samples", "judges", "label", "labels", "correct", "calibration", "budget", "batch",  # planned
    "review", "reviewers", "align", "compare",  # /judge review, judgebot review, align, compare
    "mcp", "retention", "forget", "secrets", "view",  # judgebot mcp, retention, forget, secrets, view
})
# The judge is sent the reply's schema as "<name>_verdict", and OpenAI takes schema names of 64 characters at most.
NAME_LIMIT = 64 - len("_verdict")
ALIAS_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # what people type, in one script only


@dataclass(frozen=True)
class BrokenFile:
    """A rubric file left out of the set: every problem found in it, and the names it gives as far as they can be
    read (its file name's stem, its `name` and `aliases`), so that a command typing one says the file is broken."""

    path: Path
    problems: tuple[str, ...]
    names: frozenset[str] = frozenset()

    @property
    def problem(self) -> str:
        """The problems on one line."""
        return "; ".join(self.problems)

    def __str__(self) -> str:
        return f"{self.path.name}: {self.problem}"

    def named(self, key: str) -> bool:
        """Whether people typing `key` (as `typed` makes it) mean this file's rubric."""
        return key == typed(self.path.stem) or key in self.names


class FileProblems(RubricError):
    """A rubric file's problems, all of them, and the names it gives."""

    def __init__(self, problems: Sequence[str], names: frozenset[str] = frozenset()) -> None:
        super().__init__("; ".join(problems))
        self.problems, self.names = tuple(problems), names


def rubric_from_text(text: str) -> Rubric:
    """A rubric from the YAML of a channel's revision of it, checked as a file's is (any error of either raises)."""
    rubric = Rubric.model_validate(load_yaml(text))
    rubric.self_check()
    return rubric


def load_rubric(path: Path) -> Rubric:
    """Read and validate one rubric file; errors name the file and the field, every one found."""
    try:
        return _read(path)
    except RubricError as err:
        raise RubricError(f"{path.name}: {err}") from None


def _read(path: Path) -> Rubric:
    """One rubric file; FileProblems with every problem found: those of its structure all at once (a key unknown or
    missing, a wrong type, a name people could not type) and, once the structure holds, those of its formulas."""
    return validated_file(path, parsed_file(path))


def parsed_file(path: Path) -> dict[str, Any]:
    """The mapping a rubric file holds; FileProblems when it cannot be read or is no mapping."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise FileProblems([f"cannot read the file: {yaml_problem(err)}"]) from None
    if not isinstance(data, dict):
        raise FileProblems(["expected a mapping of rubric fields at the top level"])
    return data


def validated_file(path: Path, data: dict[str, Any]) -> Rubric:
    """The rubric a file's mapping describes; FileProblems with every problem found."""
    name, aliases = data.get("name"), data.get("aliases")
    aliases = [alias for alias in aliases if isinstance(alias, str)] if isinstance(aliases, list) else []
    names = frozenset(typed(text) for text in (name, *aliases) if isinstance(text, str))
    problems = []
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as err:
        rubric, problems = None, [_explain(e) for e in err.errors(include_url=False)]
    if isinstance(name, str) and NAME_PATTERN.fullmatch(name) and path.stem != name:
        problems.append(f"name: {name!r} must match the file name {path.stem!r}")
    problems += _name_problems(name if isinstance(name, str) else "", aliases)
    if rubric is not None:
        problems += rubric.problems()
    if problems or rubric is None:
        raise FileProblems(problems, names)
    rubric.loaded_from(path)
    return rubric


def _explain(error: Any) -> str:
    """A validation error of a rubric file; an unknown key comes with the closest known one."""
    if not error["loc"]:  # a check of the whole file, whose message names its fields
        return str(error["msg"])
    if error["type"] != "extra_forbidden":
        return describe(error)
    *parent, key = error["loc"]
    return f"{describe(error)}.{did_you_mean(str(key), _keys_at(Rubric, parent))}"


def _keys_at(annotation: Any, loc: Sequence[int | str]) -> list[str]:
    """The keys a rubric file may hold at `loc` (following models, dicts and lists), as the file spells them."""
    for part in loc:
        annotation = _model_in(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {field.alias or name: field for name, field in annotation.model_fields.items()}
            if part not in fields:
                return []
            annotation = fields[str(part)].annotation
        elif typing.get_origin(annotation) in (dict, list):  # one step down to X of dict[str, X] or list[X]
            annotation = typing.get_args(annotation)[-1]
        else:
            return []
    annotation = _model_in(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [field.alias or name for name, field in annotation.model_fields.items()]
    return []


def _model_in(annotation: Any) -> Any:
    """X of `X | None`."""
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return annotation
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    return args[0] if len(args) == 1 else annotation


def _name_problems(name: str, aliases: list[str]) -> list[str]:
    """A name or alias people could not type after /judge or `judgebot judge --rubric`."""
    problems = []
    if len(name) > NAME_LIMIT:
        problems.append(f"name: {name!r} is {len(name)} characters long; a rubric name has at most {NAME_LIMIT} (the "
                        "judge's schema name is limited to 64). Shorten the name and the file name")
    if name in RESERVED_WORDS:
        problems.append(f"name: {name!r} is a word judgebot keeps for a command (`/judge {name}`), so this rubric "
                        "could never be chosen. Rename the rubric and its file")
    for index, alias in enumerate(aliases):
        if alias.strip().lower() in RESERVED_WORDS:
            problems.append(f"aliases.{index}: {alias!r} is a word judgebot keeps for a command "
                            f"(`/judge {alias.strip().lower()}`), so it could never name this rubric. Choose another "
                            "alias")
        elif not alias.strip() or len(alias.split()) > 1:
            problems.append(f"aliases.{index}: {alias!r} is not one word; people type an alias after /judge, so it has "
                            "no spaces")
        elif not ALIAS_PATTERN.fullmatch(alias.strip()):
            # Letters from other scripts, full-width or styled, can pass for another rubric's name ("еth", "ｅｔｈ").
            problems.append(f"aliases.{index}: {alias!r} is not plain ASCII letters, digits, \"-\" and \"_\": a "
                            "look-alike of another rubric's name could be typed or shared for it. Choose another alias")
    return problems


def typed(name: str) -> str:
    """A rubric name as people type it, made a key: NFKC (full-width and styled letters plain), trimmed, lower case."""
    return unicodedata.normalize("NFKC", name).strip().lower()
