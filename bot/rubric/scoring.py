"""How a validated reply is scored: the formulas of a rubric's derived values, rules and headline, and the pass rule."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from bot.errors import FormulaError
from bot.rubric.formulas import check_syntax, did_you_mean, evaluate


def _parsed(expression: str) -> str:
    check_syntax(expression)
    return expression


Formula = Annotated[str, AfterValidator(_parsed)]  # an expression over the reply, checked when the file loads


class Rule(BaseModel):
    """A consistency rule: `check` must be true of every accepted reply."""

    model_config = ConfigDict(extra="forbid")
    check: Formula
    message: str


class Derived(BaseModel):
    """A value computed from the reply: a weighted mean of fields, or an expression."""

    model_config = ConfigDict(extra="forbid")
    weights: dict[str, float] | None = None
    expr: Formula | None = None
    round: int | None = Field(2, ge=0)
    description: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Derived:
        if (self.weights is None) == (self.expr is None):
            raise ValueError("give exactly one of 'weights' or 'expr'")
        if self.weights is not None and (not self.weights or sum(self.weights.values()) <= 0):
            raise ValueError("'weights' must be non-empty with a positive total")
        return self


class Headline(BaseModel):
    """How a reply becomes one 0-100 quality figure, pass/fail, and a one-glance label."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    score: Formula = Field(description="Expression giving 0..100.")
    passed: Formula = Field(alias="pass", description="Expression giving true or false.")
    label: str = Field(description="str.format template over the reply and derived values.")
    tag: str | None = Field(None, description="Dotted path of the categorical field shown as the tag.")


@dataclass(frozen=True)
class Scoring:
    """What a validated reply adds up to."""

    derived: dict[str, float]
    headline: float
    passed: bool
    label: str
    tag: str | None


@dataclass(frozen=True)
class PartScoring:
    """What some values of a reply add up to, where they are enough: pass/fail and the headline, or None."""

    passed: bool | None
    headline: float | None


def score_part(derived_specs: dict[str, Derived], headline_spec: Headline, values: dict[str, Any]) -> PartScoring:
    """Pass/fail and the headline by the rubric's formulas on these values alone (nested, as a reply holds them)
    and the derived values they give: each None when its formula reads a value they do not hold, so that nothing
    is filled in from elsewhere (a person's label is never made whole from the judge's reply)."""
    derived: dict[str, float] = {}
    for key, spec in derived_specs.items():
        try:
            derived[key] = derive(spec, {**values, **derived})
        except (FormulaError, TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError):
            continue  # a derived value the formulas may not need
    found: list[Any] = []
    for expression in (headline_spec.passed, headline_spec.score):
        try:
            found.append(evaluate(expression, {**values, **derived}))
        except FormulaError:
            found.append(None)
    passed, headline = found
    number = isinstance(headline, (int, float)) and not isinstance(headline, bool) and math.isfinite(headline)
    return PartScoring(passed if isinstance(passed, bool) else None,
                       round(float(headline), 2) if number and 0 <= headline <= 100 else None)


def derive(spec: Derived, values: dict[str, Any]) -> float:
    """One derived value over `values` (the reply's, and the derived values before it)."""
    if spec.weights is not None:
        total = sum(spec.weights.values())
        value = sum(w * float(lookup(values, path)) for path, w in spec.weights.items()) / total
    else:
        value = float(evaluate(spec.expr or "", values))
    return round(value, spec.round) if spec.round is not None else value


def score_reply(derived_specs: dict[str, Derived], headline_spec: Headline, output: dict[str, Any]) -> Scoring:
    """Compute derived values, headline, pass/fail and label of a valid reply; a formula's own error as it is raised."""
    derived: dict[str, float] = {}
    for key, spec in derived_specs.items():
        derived[key] = derive(spec, {**output, **derived})
    values = {**output, **derived}
    headline = _headline(headline_spec, values)
    label = _label(headline_spec, values)
    tag = lookup(output, headline_spec.tag) if headline_spec.tag else None
    return Scoring(derived, round(headline, 2), _passed(headline_spec, values), label, tag)


FORMULA_FAILURES = (FormulaError, TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError)


def formula_problems(derived_specs: dict[str, Derived], headline_spec: Headline, output: dict[str, Any]) -> list[str]:
    """Every formula of a rubric tried on a valid reply, each on its own: what fails, by the field that holds it
    (the headline's formulas once the derived values they may read are computed)."""
    problems: list[str] = []
    derived: dict[str, float] = {}
    for key, spec in derived_specs.items():
        try:
            derived[key] = derive(spec, {**output, **derived})
        except FORMULA_FAILURES as err:
            problems.append(f"derived.{key}: {_failure(err)}")
    if problems:
        return problems
    values = {**output, **derived}
    for where, formula in (("headline.score", _headline), ("headline.label", _label), ("headline.pass", _passed)):
        try:
            formula(headline_spec, values)
        except FORMULA_FAILURES as err:
            problems.append(f"{where}: {_failure(err)}")
    return problems


def _failure(err: Exception) -> str:
    return str(err) if isinstance(err, FormulaError) else f"{type(err).__name__}: {err}"


def _headline(spec: Headline, values: dict[str, Any]) -> float:
    headline = float(evaluate(spec.score, values))
    if not math.isfinite(headline) or not 0 <= headline <= 100:
        raise FormulaError(f"the headline {headline} is outside 0..100")
    return headline


def _label(spec: Headline, values: dict[str, Any]) -> str:
    try:
        return spec.label.format_map(values)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as err:
        hint = did_you_mean(str(err.args[0]), values) if isinstance(err, KeyError) and err.args else ""
        raise FormulaError(
            f"label {spec.label!r}: {type(err).__name__}: {err} (nested keys are written {{a[b]}}).{hint}"
        ) from None


def _passed(spec: Headline, values: dict[str, Any]) -> bool:
    passed = evaluate(spec.passed, values)
    if not isinstance(passed, bool):
        raise FormulaError(f"pass {spec.passed!r} gave {passed!r}, not true or false: write a comparison "
                           "such as `score >= 3`")
    return passed


def lookup(values: dict[str, Any], path: str) -> Any:
    """The value at a field's dotted path in the reply (or a top-level key that holds the dots itself)."""
    if path in values:
        return values[path]
    current: Any = values
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            raise FormulaError(f"no field {path!r} in the reply")
        current = current[part]
    return current
