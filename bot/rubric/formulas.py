"""Safe evaluation of the expressions rubric files hold: rules, derived fields, the headline."""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any

from simpleeval import EvalWithCompoundTypes

from bot.errors import FormulaError

FUNCTIONS = {"len": len, "min": min, "max": max, "sum": sum, "round": round, "abs": abs, "all": all, "any": any}


def check_syntax(expression: str) -> None:
    """Raise FormulaError when `expression` is not one Python-style expression."""
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError as err:
        raise FormulaError(f"{expression!r} is not a valid expression: {err.msg}") from None


def evaluate(expression: str, values: dict[str, Any]) -> Any:
    """Evaluate `expression` over a reply's values.

    Top-level keys are names (`correctness`, `evaluation.coverage.score`); keys that are not
    identifiers are reached through `out`, as in `out["Factual Accuracy"]`.
    """
    evaluator = EvalWithCompoundTypes(names={**values, "out": values}, functions=FUNCTIONS)
    try:
        return evaluator.eval(expression, previously_parsed=_parsed(expression))
    except Exception as err:  # simpleeval raises many types; all mean the same here
        raise FormulaError(f"{expression!r} failed: {err}") from None


@lru_cache(maxsize=1024)
def _parsed(expression: str) -> ast.AST:
    # A rubric's handful of expressions run on every reply: parse each once.
    return EvalWithCompoundTypes.parse(expression)
