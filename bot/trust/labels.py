"""What people say a verdict should have been: `human_pass` and `human_<field>` columns of a CSV, what the rubric
makes of a person's own values, and the one rule that reads a vote as a label."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from bot.csvfiles.spelling import closest

if TYPE_CHECKING:  # a rubric comes with its package loaded: reading votes as labels (the stats) loads none
    from bot.rubric import FieldSpec, Rubric

PREFIX = "human_"
PASS = "pass"  # the column human_pass: the person's pass/fail, whatever the fields say
GIVEN, RULE = "given", "rule"  # a label's pass/fail: as the person gave it, or the pass rule on their own values
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "pass", "passed"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "fail", "failed"})
LABELED_KINDS = ("enum", "integer", "number", "boolean")  # what a person can say of a verdict in a cell
ORDINAL_LEVELS = 11  # an integer field of at most this many values (0-10) is an ordinal scale with a weighted kappa
Value = TypeVar("Value")


class HumanValues(BaseModel):
    """What a row's label columns say: the person's value of each field they filled in, and their pass/fail."""

    values: dict[str, Any] = {}
    passed: bool | None = None

    @property
    def empty(self) -> bool:
        """Whether the row says nothing."""
        return not self.values and self.passed is None


class Completed(BaseModel):
    """A label with what the rubric makes of the person's own values: pass/fail (and where it came from), tag and
    headline, each None where their values are not enough."""

    values: dict[str, Any]
    passed: bool | None
    pass_from: str | None  # GIVEN, RULE, or None when pass/fail is not given
    tag: str | None
    headline: float | None


def labelable(rubric: Rubric) -> dict[str, FieldSpec]:
    """The fields of a rubric a person can label, by dotted path: enums, numbers and booleans."""
    from bot.rubric import leaves

    return {path: spec for path, spec in leaves(rubric.output) if spec.type in LABELED_KINDS}


def tag_order(rubric: Rubric) -> list[str]:
    """The rubric's tag values in its own order (empty when it has no tag)."""
    spec = labelable(rubric).get(rubric.headline.tag or "")
    return list(spec.values or []) if spec is not None else []


def numeric_paths(rubric: Rubric) -> list[str]:
    """The numeric fields a person can label, whose differences calibration measures."""
    return [path for path, spec in labelable(rubric).items() if spec.type in ("integer", "number")]


def ordinal_scales(rubric: Rubric) -> dict[str, list[int]]:
    """The integer fields with a small range (such as eth's 0-2), by path, each with its values lowest first: their
    agreement is a linearly weighted kappa (1 against 2 is nearer than 0 against 2)."""
    return {path: list(range(int(spec.min), int(spec.max) + 1)) for path, spec in labelable(rubric).items()
            if spec.type == "integer" and spec.min is not None and spec.max is not None
            and 1 <= spec.max - spec.min < ORDINAL_LEVELS}


def spelled(header: str) -> str:
    """A header as label columns are matched: lower case, each run of spaces, hyphens and underscores one "_"
    ("Human Pass", "human-pass" and "HUMAN_ pass" all read "human_pass")."""
    return re.sub(r"[\s_-]+", "_", header.strip().lower())


def _label_targets(headers: list[str], rubric: Rubric) -> _Targets:
    """Each header that names a label, with what it names (a field path, or "pass"), in file order; the headers that
    start like one (human_...) but name no field of the rubric that can be labeled; and those that name several."""
    fields: dict[str, list[str]] = {}
    for path in labelable(rubric):
        fields.setdefault(spelled(path), []).append(path)
    found = _Targets()
    for header in headers:
        written = spelled(header)
        if not written.startswith(PREFIX):
            continue
        name = written[len(PREFIX):]
        alike = fields.get(name, [])
        exact = [path for path in alike if header.strip()[len(PREFIX):] == path]  # the rubric's own spelling decides
        if name == PASS:
            found.named.append((header, PASS))
        elif len(alike) == 1 or len(exact) == 1:
            found.named.append((header, (exact or alike)[0]))
        elif alike:
            found.ambiguous.append((header, tuple(alike)))
        else:
            found.unknown.append(header)
    return found


@dataclass
class _Targets:
    named: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    ambiguous: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def label_columns(headers: list[str], rubric: Rubric) -> tuple[dict[str, str], list[str]]:
    """The label columns among `headers` ({header: field path, or "pass"}), and the `human_` headers that name no
    field of the rubric (to be reported, not guessed at).

    A header is matched whatever its case, spaces, hyphens and underscores: "Human Pass" is human_pass, and
    `human_Factual Accuracy`, `human_factual_accuracy` and `Human Factual-Accuracy` all name the field "Factual
    Accuracy". When several headers name the same label, the leftmost is read and the others are not
    (`repeated_columns` names them); a header that could name several fields is not read (`ambiguous_columns`).
    """
    found = _label_targets(headers, rubric)
    columns: dict[str, str] = {}
    for header, target in found.named:
        if target not in columns.values():
            columns[header] = target
    return columns, found.unknown


def meant_labels(unknown: Sequence[str], rubric: Rubric) -> dict[str, str]:
    """{header: label column} for each of the `unknown` human_ headers that nearly spells a label column of the
    rubric ("human_pas": human_pass), named as the rubric spells its field."""
    names = {spelled(name): name for name in (PASS, *labelable(rubric))}
    meant = {}
    for header in unknown:
        found = closest([spelled(header)[len(PREFIX):]], names)
        if found is not None:
            meant[header] = PREFIX + names[found]
    return meant


def unknown_text(header: str, meant: str | None, rubric_name: str = "this rubric") -> str:
    """Why a human_ column is not read as a label, and the label column it nearly spells, if one: a sentence."""
    return (f"column {header} names no field of {rubric_name} that can be labeled, so it is not read as a label"
            + (f"; did you mean {meant}?" if meant else ""))


def repeated_columns(headers: list[str], rubric: Rubric) -> list[tuple[str, str]]:
    """(header, the header read instead) for each label column that names a label a column left of it names too."""
    first: dict[str, str] = {}
    repeated = []
    for header, target in _label_targets(headers, rubric).named:
        if target in first:
            repeated.append((header, first[target]))
        else:
            first[target] = header
    return repeated


def ambiguous_columns(headers: list[str], rubric: Rubric) -> list[tuple[str, tuple[str, ...]]]:
    """(header, the fields it could name) for each `human_` header that fits several fields of the rubric alike
    (such as "Factual Accuracy" and "factual_accuracy") and spells none of them exactly: it is not read."""
    return _label_targets(headers, rubric).ambiguous


def ambiguity_text(header: str, fields: Sequence[str]) -> str:
    """Why an ambiguous label column is not read, and how to name one field: a sentence."""
    named = " and ".join(f'"{path}"' for path in fields)
    return (f"column {header} could name any of the fields {named} of this rubric, so it was not read as a label; "
            f"name one exactly as the rubric spells it, such as {PREFIX}{fields[0]}")


def _cell(value: str, spec: FieldSpec, header: str) -> Any:
    """One label cell as its field's value; ValueError naming the column and what it takes."""
    text = value.strip()
    if spec.type == "enum":
        known = {option.lower(): option for option in spec.values or []}
        if text.lower() not in known:
            raise ValueError(f"{header} {text!r} is not one of {', '.join(spec.values or [])}")
        return known[text.lower()]
    if spec.type == "boolean":
        return _yes_no(text, header)
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{header} {text!r} is not a number") from None
    if not math.isfinite(number):  # "nan" and "inf" read as floats, but no person scores with them
        raise ValueError(f"{header} {text!r} is not a number")
    if spec.type == "integer":
        if not number.is_integer():
            raise ValueError(f"{header} {text!r} is not a whole number")
        number = int(number)
    if (spec.min is not None and number < spec.min) or (spec.max is not None and number > spec.max):
        raise ValueError(f"{header} {text!r} is outside {spec.min:g}..{spec.max:g}" if spec.min is not None
                         and spec.max is not None else f"{header} {text!r} is out of range")
    return number


def _yes_no(text: str, header: str) -> bool:
    if text.lower() in TRUE_WORDS:
        return True
    if text.lower() in FALSE_WORDS:
        return False
    raise ValueError(f"{header} {text!r} is not true or false (or yes/no, pass/fail, 1/0)")


def read_label(cells: dict[str, Any], columns: dict[str, str], rubric: Rubric) -> HumanValues:
    """The label one row's cells hold (empty cells say nothing); ValueError naming every cell that cannot be a value."""
    fields = labelable(rubric)
    label = HumanValues()
    problems = []
    for header, path in columns.items():
        cell = cells.get(header)
        if cell is None or not str(cell).strip():
            continue
        try:
            if path == PASS:
                label.passed = _yes_no(str(cell).strip(), header)
            else:
                label.values[path] = _cell(str(cell), fields[path], header)
        except ValueError as err:
            problems.append(str(err))
    if problems:
        raise ValueError("; ".join(problems))
    return label


def complete(label: HumanValues, rubric: Rubric) -> Completed:
    """What the rubric makes of a label: the person's own pass/fail when they gave it, else the rubric's pass rule on
    their own values alone (RULE); the tag and headline likewise from their values only.

    Nothing is taken from the judge's reply: a label that says correctness 0 and nothing the pass rule also reads
    leaves pass/fail not given, and counts only for the fields it names.
    """
    from bot.rubric.fields import nested

    tag_path = rubric.headline.tag
    tag = label.values.get(tag_path) if tag_path else None
    own = rubric.score_alone(nested(label.values)) if label.values else None
    passed: bool | None
    pass_from: str | None
    if label.passed is not None:
        passed, pass_from = label.passed, GIVEN
    else:
        passed = own.passed if own is not None else None
        pass_from = None if passed is None else RULE
    return Completed(values=label.values, passed=passed, pass_from=pass_from, tag=None if tag is None else str(tag),
                     headline=own.headline if own is not None else None)


@dataclass(frozen=True)
class VoteLabel(Generic[Value]):
    """What a vote says as a label: the person's pass/fail, tag and field values (whatever is not said is None or
    left out)."""

    passed: bool | None
    tag: str | None
    values: dict[str, Value]


def vote_as_label(agree: bool, *, passed: bool | None, tag: str | None = None,
                  values: dict[str, Value] | None = None) -> VoteLabel[Value]:
    """A vote on a verdict read as a label of it (`passed`, `tag` and `values` are the judge's): an Agree says the
    judge was right in everything, a Disagree only that pass/fail should have been the other way.

    The one rule every figure, export and check reads votes by. A person's label of a judgment stands in for their
    vote on it (the history reads no vote of a person who labeled the same judgment).
    """
    if agree:
        return VoteLabel(passed, tag, dict(values or {}))
    return VoteLabel(None if passed is None else not passed, None, {})


def value_at(values: dict[str, Any] | None, path: str) -> Any:
    """The value at a dotted path of nested dicts, or None when any part of the path is missing."""
    found: Any = values
    for part in path.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found


def numbers_at(values: dict[str, Any] | None, paths: Sequence[str], *, dotted: bool = False) -> dict[str, float]:
    """The numbers at `paths` (nested dicts, or flat keys that are dotted paths); a path without a number is left out."""
    found: dict[str, float] = {}
    for path in paths:
        value = (values or {}).get(path) if dotted else value_at(values, path)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[path] = float(value)
    return found
