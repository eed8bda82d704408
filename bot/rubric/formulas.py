"""Safe evaluation of the expressions rubric files hold: rules, derived fields, the headline."""

from __future__ import annotations

import ast
import difflib
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from simpleeval import AttributeDoesNotExist, EvalWithCompoundTypes, FunctionNotDefined, NameNotDefined

from bot.errors import FormulaError
from bot.rubric.compiled_formulas import CompiledFormulas

FUNCTIONS = {"len": len, "min": min, "max": max, "sum": sum, "round": round, "abs": abs, "all": all, "any": any}
# What simpleeval's evaluator calls (FUNCTIONS and the compound types it adds), compiled over once a formula is used.
_COMPILED = CompiledFormulas({**FUNCTIONS, "list": list, "tuple": tuple, "dict": dict, "set": set})
_evaluators = threading.local()  # one evaluator a thread, its names set for each expression: building one is dear


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

    An expression is run as Python code compiled once (bot.rubric.compiled_formulas) where that gives simpleeval's
    value; one left out there, or whose run raises, is simpleeval's to evaluate (its value, or its error).
    """
    formula = _COMPILED.compiled(expression)
    if formula is not None:
        try:
            return _COMPILED.run(formula, values)
        except Exception:  # the error (or a value reached another way) is simpleeval's to give
            pass
    evaluator = getattr(_evaluators, "one", None)
    if evaluator is None:
        evaluator = _evaluators.one = EvalWithCompoundTypes(functions=FUNCTIONS)
    evaluator.names = {**values, "out": values}
    try:
        return evaluator.eval(expression, previously_parsed=_parsed(expression))
    except Exception as err:  # simpleeval raises many types; all mean the same here
        problem = f"{expression!r} failed: {err}"
        if hint := _hint(err, values):
            problem = f"{problem.rstrip('.')}.{hint}"
        raise FormulaError(problem) from None
    finally:
        evaluator.names = {}  # the reply's values are not kept past its evaluation


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """" Did you mean 'x'?" when one of `choices` is close to `word`, else nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _hint(err: Exception, values: dict[str, Any]) -> str:
    if isinstance(err, NameNotDefined):
        return did_you_mean(err.name, values)
    if isinstance(err, FunctionNotDefined):
        return did_you_mean(err.func_name, FUNCTIONS)
    if isinstance(err, AttributeDoesNotExist):
        return did_you_mean(err.attr, _nested_keys(values))
    if isinstance(err, KeyError) and err.args and isinstance(err.args[0], str):  # out["Factual Acuracy"]
        return did_you_mean(err.args[0], values)
    return ""


def _nested_keys(values: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for key, value in values.items():
        found.add(key)
        if isinstance(value, dict):
            found |= _nested_keys(value)
    return found


@lru_cache(maxsize=1024)
def _parsed(expression: str) -> ast.AST:
    # A rubric's handful of expressions run on every reply: parse each once.
    return EvalWithCompoundTypes.parse(expression)
