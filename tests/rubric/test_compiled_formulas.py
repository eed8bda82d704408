"""Formulas compiled to Python give simpleeval's value, or leave the expression to simpleeval with its error: every
formula of every shipped rubric over replies of every shape its fields allow (and some they do not), the language's
corners one by one, and what simpleeval refuses refused the same."""

from __future__ import annotations

import random
from typing import Any

import pytest
from simpleeval import EvalWithCompoundTypes

from bot.errors import FormulaError
from bot.rubric import FieldSpec, Rubric
from bot.rubric.compiled_formulas import CompiledFormulas
from bot.rubric.formulas import FUNCTIONS, evaluate
from tests.support.sound_replies import SOUND

CALLED = {**FUNCTIONS, "list": list, "tuple": tuple, "dict": dict, "set": set}
RAISED = object()  # what an evaluation that raised gives, to compare


EVALUATOR = EvalWithCompoundTypes(functions=dict(CALLED))
COMPILED = CompiledFormulas(CALLED)


def by_simpleeval(expression: str, values: dict[str, Any]) -> Any:
    """The expression's value as simpleeval alone gives it, or RAISED."""
    evaluator = EVALUATOR
    evaluator.names = {**values, "out": values}
    try:
        return evaluator.eval(expression)
    except Exception:
        return RAISED


def compiled_value(expression: str, values: dict[str, Any]) -> Any:
    """The expression's value as its compiled function gives it, RAISED when it raised, None when not compiled."""
    formula = COMPILED.compiled(expression)
    if formula is None:
        return None
    try:
        return COMPILED.run(formula, values)
    except Exception:
        return RAISED


def same(expression: str, values: dict[str, Any]) -> None:
    """The compiled value is simpleeval's (or the compiled run raised, and `evaluate` then gives simpleeval's)."""
    expected = by_simpleeval(expression, values)
    found = compiled_value(expression, values)
    if found is not RAISED and found is not None:
        assert (found, type(found)) == (expected, type(expected)), expression
    try:
        assert evaluate(expression, values) == expected and expected is not RAISED, expression
    except FormulaError:
        assert expected is RAISED, expression


def formulas_of(rubric: Rubric) -> list[str]:
    return [*(rule.check for rule in rubric.rules), *(spec.expr for spec in rubric.derived.values() if spec.expr),
            rubric.headline.score, rubric.headline.passed]


def random_value(spec: FieldSpec, rng: random.Random) -> Any:
    """A value of the field's kind (now and then one of another kind, or None)."""
    if rng.random() < 0.05:
        return rng.choice([None, "2", 2.5, True, [], {}])
    if spec.type == "integer":
        low, high = int(spec.min if spec.min is not None else -3), int(spec.max if spec.max is not None else 5)
        return rng.randint(low, high)
    if spec.type == "number":
        return rng.choice([0.0, 0.5, 1.0, 2.0, rng.uniform(-1, 10)])
    if spec.type == "boolean":
        return rng.random() < 0.5
    if spec.type == "enum":
        return rng.choice(spec.values or [""])
    if spec.type == "string":
        return rng.choice(["", " ", "a claim", "x" * 30])
    if spec.type == "list":
        assert spec.items is not None
        return [random_value(spec.items, rng) for _ in range(rng.randint(0, 4))]
    return random_reply(spec.fields or {}, rng)


def random_reply(fields: dict[str, FieldSpec], rng: random.Random) -> dict[str, Any]:
    return {key: random_value(spec, rng) for key, spec in fields.items()}


def test_every_shipped_formula_gives_simpleevals_value_over_replies_of_every_shape(rubrics) -> None:
    rng = random.Random(44)
    checked = 0
    for rubric in rubrics:
        expressions = formulas_of(rubric)
        assert all(COMPILED.compiled(expression) is not None for expression in expressions), rubric.name
        replies = [*SOUND.get(rubric.name, {}).values(), *(random_reply(rubric.output, rng) for _ in range(60))]
        for reply in replies:
            values = dict(reply)
            for key, spec in rubric.derived.items():  # the derived values, as scoring reads them, when they come
                if spec.expr is not None and (value := by_simpleeval(spec.expr, values)) is not RAISED:
                    values[key] = value
            for expression in expressions:
                same(expression, values)
                checked += 1
    assert checked > 4_000


@pytest.mark.parametrize("expression", [
    "a + b * 2 - c / 4 // 1 % 3", "a ** 2", "a ** 5000000", "'ab' * 3", "'a' * 200000", "xs + xs", "[1] * 100001",
    "1 < a <= 3", "a in xs and not b", "a is None or b is not None", "-a + +b", "~a", "a ^ b | c & 3", "a << 2",
    "a if b else c", "xs[1:3]", "xs[::-1]", "xs[-1]", "xs[9]", "d['k']", "d['missing']", "out['odd key'] + 1",
    "out", "d.k", "d.keys", "d.keys()", "d.get('k')", "d.missing", "s.strip().upper()", "s.__class__", "s.format(1)",
    "xs.count(1)", "len(xs)", "len", "len + 1", "max(xs, default=0)", "round(a / 3, 2)", "sum(x for x in xs)",
    "len(x for x in xs)", "[x for x in xs if x > 1]", "[x * y for x in xs for y in xs if x != y]",
    "{x: x * 2 for x in xs}", "[i for i in ys for j in ys]", "[(a, b) for a, b in pairs]", "[a for a, b in triples]",
    "{1, 2}", "(1, 2)[0]", "[*xs, 1]", "{**d, 'z': 1}", "min(*xs)", "abs(**d)", "unknown + 1", "range(3)",
    "lambda: 1", "f'{a}'", "{x for x in xs}", "(y := 2)", "a.real", "all([c.ok for c in items])", "1 / 0",
    "items[0].ok and items[1].name == 'n'", "[c for c in items if c.ok][0].name", "'x' in s", "s[0]",
])
def test_each_corner_of_the_language_gives_simpleevals_value_or_its_error(expression: str) -> None:
    values = {"a": 2, "b": 3, "c": 8, "xs": [1, 2, 3], "ys": list(range(120)), "d": {"k": 1, "keys": 5}, "s": " hi ",
              "odd key": 4, "len": 7, "pairs": [(1, 2), (3, 4)], "triples": [(1, 2, 3)],
              "items": [{"ok": True, "name": "n"}, {"ok": False, "name": "n"}]}
    same(expression, values)


def test_a_field_named_like_a_function_is_the_fields_and_a_call_is_the_functions() -> None:
    values = {"len": 7, "xs": [1, 2]}
    assert evaluate("len + 1", values) == 8 and evaluate("len(xs)", values) == 2
    assert evaluate("len(xs)", {"xs": [1]}) == 1 and evaluate("len", {}) is len


def test_what_simpleeval_refuses_stays_refused_with_its_sentence() -> None:
    for expression, values, said in (("clams", {"claims": []}, "Did you mean 'claims'?"),
                                     ("s.__class__", {"s": "x"}, "__attributes"),
                                     ("[i for i in xs for j in xs]", {"xs": list(range(200))}, "too many"),
                                     ("'a' * 200000", {}, "that long")):
        with pytest.raises(FormulaError, match=said):
            evaluate(expression, values)
