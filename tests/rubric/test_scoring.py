"""Tests for bot.rubric on replies: the seed rubrics' rules and scores, the strict JSON schema the judge is sent,
right-to-left text, and formulas that fail on a reply or reach a nullable field."""

from __future__ import annotations

import copy

import pytest

from bot.rubric import Rubric, RubricError, builtin_dir, load_rubric
from tests.support.rubric_files import mini, seed_data, write

SEEDS = ("eth", "academic", "benchmark")


# --- the seed rubrics' rules -----------------------------------------------------------------------------------


def eth(correctness, completeness, tag, reasoning="Should name myStudies (ETHIS).") -> dict:
    return {"correctness": correctness, "completeness": completeness, "result_tag": tag, "reasoning": reasoning}


@pytest.mark.parametrize(
    ("reply", "broken"),
    [
        (eth(2, 2, "Correct"), []),
        (eth(2, 0, "Correct"), []),
        (eth(0, 1, "Generic"), []),
        (eth(1, 1, "Generic"), []),
        (eth(0, 0, "Refusal"), []),
        (eth(0, 0, "Hallucination"), []),
        (eth(1, 2, "Correct"), ["correctness is 2 exactly when result_tag is Correct"]),
        (eth(2, 1, "Generic"), ["correctness is 2 exactly when result_tag is Correct"]),
        (eth(2, 0, "Refusal"), ["correctness is 2 exactly when result_tag is Correct",
                                "a Refusal or a Hallucination has correctness 0"]),
        (eth(1, 0, "Refusal"), ["a Refusal or a Hallucination has correctness 0"]),
        (eth(1, 0, "Hallucination"), ["a Refusal or a Hallucination has correctness 0"]),
        (eth(2, 2, "Correct", reasoning="  \n "), ["reasoning must not be empty"]),
    ],
)
def test_eth_rules(rubrics, reply, broken):
    output, problems = rubrics.get("eth").validate_reply(reply)
    assert output == reply
    assert problems == broken


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        (eth(3, 2, "Correct"), "correctness"),
        (eth(-1, 2, "Generic"), "correctness"),
        (eth(2, 2, "correct"), "result_tag"),
        ({**eth(2, 2, "Correct"), "confidence": 0.9}, "confidence"),
        ({k: v for k, v in eth(2, 2, "Correct").items() if k != "reasoning"}, "reasoning"),
        (eth(2, "two", "Correct"), "completeness"),
    ],
)
def test_eth_schema_errors(rubrics, reply, field):
    output, problems = rubrics.get("eth").validate_reply(reply)
    assert output is None
    assert any(p.startswith(f"{field}:") for p in problems), problems


def test_not_an_object_is_a_problem(rubrics):
    output, problems = rubrics.get("eth").validate_reply([eth(2, 2, "Correct")])
    assert output is None and problems and problems[0].startswith("reply:")


def acad(cov=5, missing=(), fact=5, wrong=(), clar=5, issues=None, revision=None, attempt=0, term=None) -> dict:
    return {
        "revision_attempt": attempt,
        "reference_facts": ["36 credits"],
        "key_aspects": ["thesis track"],
        "evaluation": {
            "coverage": {"score": cov, "missing_aspects": list(missing)},
            "factuality": {"score": fact, "incorrect_facts": list(wrong)},
            "clarity": {"score": clar, "issues": issues},
        },
        "proposed_revision": revision,
        "termination_reason": term,
    }


MISSING = "missing_aspects must be empty exactly when the coverage score is 5"
INCORRECT = "incorrect_facts must be empty exactly when the factuality score is 5"
REVISION = "a proposed_revision is given when and only when some score is below 4"
PERFECT = "termination_reason perfect_score needs every score at 5"


@pytest.mark.parametrize(
    ("reply", "broken"),
    [
        (acad(), []),
        (acad(term="perfect_score"), []),
        (acad(cov=4, missing=["exam track"]), []),
        (acad(cov=3, missing=["exam track"], revision="Better.", attempt=1, term="max_revisions"), []),
        (acad(fact=2, wrong=["30-36"], revision="Exactly 36.", issues=""), []),
        (acad(cov=5, missing=["exam track"]), [MISSING]),
        (acad(cov=4), [MISSING]),
        (acad(fact=5, wrong=["x"]), [INCORRECT]),
        (acad(fact=4), [INCORRECT]),
        (acad(clar=3), [REVISION]),
        (acad(clar=3, revision="   "), [REVISION]),
        (acad(revision="Unneeded revision."), [REVISION]),
        (acad(clar=4, term="perfect_score"), [PERFECT]),
        (acad(cov=2, fact=5, wrong=["x"], term="perfect_score"), [MISSING, INCORRECT, REVISION, PERFECT]),
    ],
)
def test_academic_rules(rubrics, reply, broken):
    output, problems = rubrics.get("academic").validate_reply(reply)
    assert output == reply
    assert problems == broken


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        (acad(attempt=2), "revision_attempt"),
        (acad(cov=6), "evaluation.coverage.score"),
        (acad(clar=0), "evaluation.clarity.score"),
        (acad(term="done"), "termination_reason"),
        ({**acad(), "evaluation": {"coverage": {"score": 5, "missing_aspects": []}}}, "evaluation.factuality"),
    ],
)
def test_academic_schema_errors(rubrics, reply, field):
    output, problems = rubrics.get("academic").validate_reply(reply)
    assert output is None
    assert any(p.startswith(f"{field}") for p in problems), problems


def bench(fa=4.0, rel=4.0, cla=4.0, lang=4.0, con=4.0, overall=4.0) -> dict:
    return {"Factual Accuracy": fa, "Relevance": rel, "Clarity": cla, "Language Consistency": lang,
            "Conciseness": con, "Overall": overall}


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        (bench(fa=0.5), "Factual Accuracy"),
        (bench(con=5.5), "Conciseness"),
        ({k: v for k, v in bench().items() if k != "Overall"}, "Overall"),
        ({**bench(), "factual_accuracy": 4}, "factual_accuracy"),
        (bench(rel="high"), "Relevance"),
    ],
)
def test_benchmark_schema_errors(rubrics, reply, field):
    output, problems = rubrics.get("benchmark").validate_reply(reply)
    assert output is None
    assert any(p.startswith(f"{field}:") for p in problems), problems


@pytest.mark.parametrize(
    "scores",
    [
        (5, 5, 5, 5, 5),
        (1, 1, 1, 1, 1),
        (1, 5, 5, 5, 5),
        (5, 1, 1, 1, 1),
        (3.5, 4, 2.5, 5, 3),
        (4.2, 3.7, 4.9, 1.3, 2.8),
    ],
)
def test_benchmark_overall_weighted_uses_the_stated_weights(rubrics, scores):
    rubric = rubrics.get("benchmark")
    reply = bench(*scores, overall=3.0)
    output, problems = rubric.validate_reply(reply)
    assert problems == []
    scoring = rubric.score(output)
    fa, rel, cla, lang, con = scores
    expected = 0.40 * fa + 0.15 * (rel + cla + lang + con)
    assert scoring.derived["overall_weighted"] == pytest.approx(expected, abs=0.0051)  # rounded to 2 places
    assert scoring.derived["overall_weighted"] == round(scoring.derived["overall_weighted"], 2)
    assert scoring.headline == pytest.approx((scoring.derived["overall_weighted"] - 1) / 4 * 100, abs=0.005)
    assert 0 <= scoring.headline <= 100
    assert scoring.passed is (scoring.derived["overall_weighted"] >= 3.5)
    assert output["Overall"] == 3.0  # the judge's own figure is untouched
    assert scoring.label.endswith("(judge 3.0)")


def test_benchmark_factual_accuracy_weighs_most(rubrics):
    rubric = rubrics.get("benchmark")
    high_fact = rubric.score(rubric.validate_reply(bench(fa=5, rel=1))[0])
    high_rel = rubric.score(rubric.validate_reply(bench(fa=1, rel=5))[0])
    assert high_fact.derived["overall_weighted"] == pytest.approx(3.95)  # 0.40 * 5 + 0.15 * (1 + 4 + 4 + 4)
    assert high_rel.derived["overall_weighted"] == pytest.approx(2.95)  # 0.40 * 1 + 0.15 * (5 + 4 + 4 + 4)
    assert high_fact.passed and not high_rel.passed


def test_benchmark_weights_in_the_file(rubrics):
    weights = rubrics.get("benchmark").derived["overall_weighted"].weights
    assert weights == {"Factual Accuracy": 0.40, "Relevance": 0.15, "Clarity": 0.15,
                       "Language Consistency": 0.15, "Conciseness": 0.15}


def test_weights_are_normalised_by_their_total(tmp_path):
    data = mini(derived={"mean": {"weights": {"score": 2, "bonus": 6}, "round": 3}})
    data["output"]["bonus"] = {"type": "number", "min": 0, "max": 1}
    rubric = load_rubric(write(tmp_path, data))
    output, _ = rubric.validate_reply({"score": 2, "verdict": "good", "why": "", "bonus": 0.5})
    assert rubric.score(output).derived == {"mean": pytest.approx(0.875)}  # (2*2 + 6*0.5) / 8


def test_derived_over_nested_paths_and_odd_keys(tmp_path):
    data = mini(derived={
        "mean": {"weights": {"parts.a": 1, "parts.b": 3}},
        "spread": {"expr": 'abs(out["Odd Key"] - mean)', "round": 1},
    })
    data["output"]["parts"] = {"type": "object", "fields": {"a": {"type": "number"}, "b": {"type": "number"}}}
    data["output"]["Odd Key"] = {"type": "number"}
    rubric = load_rubric(write(tmp_path, data))
    output, problems = rubric.validate_reply(
        {"score": 1, "verdict": "bad", "why": "", "parts": {"a": 1, "b": 2}, "Odd Key": 4})
    assert problems == []
    assert rubric.score(output).derived == {"mean": 1.75, "spread": 2.2}  # (1 + 6) / 4; |4 - 1.75| to 1 place


# --- the strict JSON schema ----------------------------------------------------------------------------------------


def objects(schema):
    """Every object schema inside `schema`, however nested (properties, items, anyOf)."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield schema
        for value in schema.values():
            yield from objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from objects(value)


@pytest.mark.parametrize("name", SEEDS)
def test_reply_schema_is_strict(rubrics, name):
    schema = rubrics.get(name).reply_schema
    found = list(objects(schema))
    assert found[0] is schema
    for obj in found:
        assert obj["type"] == "object"
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])


def test_academic_schema_shape(rubrics):
    schema = rubrics.get("academic").reply_schema
    assert len(list(objects(schema))) == 5  # reply, evaluation, coverage, factuality, clarity
    props = schema["properties"]
    assert props["proposed_revision"]["type"] == ["string", "null"]
    assert props["termination_reason"]["enum"] == ["perfect_score", "max_revisions", "no_improvement", None]
    assert props["reference_facts"] == {"type": "array", "items": {"type": "string"}}
    assert props["evaluation"]["properties"]["coverage"]["properties"]["score"] == {
        "type": "integer", "minimum": 1, "maximum": 5}


def test_eth_and_benchmark_schema_shape(rubrics):
    eth_props = rubrics.get("eth").reply_schema["properties"]
    assert eth_props["result_tag"]["enum"] == ["Correct", "Generic", "Refusal", "Hallucination"]
    assert eth_props["correctness"]["type"] == "integer"
    assert (eth_props["correctness"]["minimum"], eth_props["correctness"]["maximum"]) == (0, 2)
    bench_schema = rubrics.get("benchmark").reply_schema
    assert bench_schema["required"] == ["Factual Accuracy", "Relevance", "Clarity", "Language Consistency",
                                        "Conciseness", "Overall"]
    assert bench_schema["properties"]["Clarity"] == {"type": "number", "minimum": 1, "maximum": 5}


def test_nullable_object_and_list_stay_strict(tmp_path):
    data = mini()
    data["output"]["detail"] = {"type": "object", "nullable": True,
                                "fields": {"a": {"type": "integer"}, "b": {"type": "string", "nullable": True}}}
    data["output"]["notes"] = {"type": "list", "nullable": True,
                               "items": {"type": "object", "fields": {"n": {"type": "string"}}}}
    rubric = load_rubric(write(tmp_path, data))
    schema = rubric.reply_schema
    assert schema["properties"]["detail"]["anyOf"][1] == {"type": "null"}
    assert schema["properties"]["notes"]["anyOf"][1] == {"type": "null"}
    found = list(objects(schema))
    assert len(found) == 3
    for obj in found:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    output, problems = rubric.validate_reply({"score": 2, "verdict": "good", "why": "", "detail": None, "notes": None})
    assert problems == [] and output["detail"] is None
    output, problems = rubric.validate_reply(
        {"score": 2, "verdict": "good", "why": "", "detail": {"a": 1, "b": None, "c": 2}, "notes": []})
    assert output is None and any(p.startswith("detail.c:") for p in problems)


# --- right-to-left text --------------------------------------------------------------------------------------------


def test_arabic_rubric_text_survives(tmp_path):
    data = mini(
        "arabic",
        title="تقييم الإجابات",
        description="يقيّم الإجابة مقابل الإجابة المرجعية.",
        system="قيّم الإجابة بدقة. \u200fلا تخترع معلومات.\n",
        user_template="السؤال:\n$question\n\nالإجابة المرجعية:\n$reference\n\nالإجابة:\n$answer\n",
        headline={"score": "score / 2 * 100", "pass": "score >= 1", "label": "الحكم: {verdict} ({score}/2)",
                  "tag": "verdict"},
    )
    data["output"]["verdict"] = {"type": "enum", "values": ["جيد", "سيئ"]}
    data["rules"] = [{"check": "(score == 2) == (verdict == 'جيد')", "message": "الدرجة 2 تعني جيد فقط"}]
    rubric = load_rubric(write(tmp_path, data))
    assert rubric.title == "تقييم الإجابات"
    assert rubric.system == "قيّم الإجابة بدقة. \u200fلا تخترع معلومات.\n"
    assert rubric.reply_schema["properties"]["verdict"]["enum"] == ["جيد", "سيئ"]
    reply = {"score": 2, "verdict": "جيد", "why": "الإجابة تذكر ٣٦ ساعة معتمدة"}
    output, problems = rubric.validate_reply(reply)
    assert output == reply and problems == []
    scoring = rubric.score(output)
    assert scoring.label == "الحكم: جيد (2/2)"
    assert scoring.tag == "جيد"
    _, problems = rubric.validate_reply({**reply, "score": 1})
    assert problems == ["الدرجة 2 تعني جيد فقط"]
    # the same rubric with the same text hashes the same however it was written out
    assert load_rubric(write(tmp_path, data)).content_hash == rubric.content_hash


def test_academic_arabic_golden_loads_unchanged(rubrics):
    golden = {g.name: g for g in rubrics.get("academic").goldens}["arabic-credit-ranges"]
    assert golden.question.startswith("كم عدد الساعات المعتمدة")
    assert "مسار الامتحان الشامل" in golden.reference
    raw = (builtin_dir() / "academic.yaml").read_text(encoding="utf-8")
    assert golden.question in raw


def test_seed_rubrics_pass_their_self_check(rubrics):
    for rubric in rubrics:
        rubric.self_check()
        copy_ = Rubric.model_validate(copy.deepcopy(seed_data(rubric.name)))
        assert copy_.content_hash == rubric.content_hash


# --- formulas that fail on a reply, nullable fields ----------------------------------------------------------------


def nullable_rubric(tmp_path, **headline) -> Rubric:
    data = mini(headline={"score": "x * 10", "pass": "x >= 5", "label": "x is {x}", **headline}, rules=[])
    data["output"]["x"] = {"type": "number", "min": 0, "max": 10, "nullable": True}
    return load_rubric(write(tmp_path, data))


@pytest.mark.parametrize(("headline", "words", "at_five"), [
    ({}, ["x * 10"], 50.0),  # simpleeval's TypeError inside an expression
    ({"score": "x"}, ["TypeError", "float()"], 5.0),  # float(None) outside any expression
    ({"score": "(x or 0) * 10", "pass": "True", "label": "x is {x:.1f}"}, ["TypeError", "NoneType"], 50.0),
], ids=["expression", "float", "label"])
def test_a_formula_that_fails_on_a_valid_reply_raises_formula_error(tmp_path, headline, words, at_five):
    from bot.errors import FormulaError

    rubric = nullable_rubric(tmp_path, **headline)  # loads: the sample reply has a number for x
    output, problems = rubric.validate_reply({"score": 1, "verdict": "bad", "why": "", "x": None})
    assert problems == [] and output["x"] is None
    with pytest.raises(FormulaError) as caught:
        rubric.score(output)
    for word in words:
        assert word in str(caught.value), str(caught.value)
    output, _ = rubric.validate_reply({"score": 1, "verdict": "bad", "why": "", "x": 5})
    assert rubric.score(output).headline == at_five


def test_a_weighted_mean_over_a_nullable_field_is_refused_at_load(tmp_path):
    data = mini(derived={"mean": {"weights": {"score": 1, "x": 1}}})
    data["output"]["x"] = {"type": "number", "min": 0, "max": 10, "nullable": True}
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, data))
    message = str(caught.value)
    assert message.startswith("mini.yaml: derived.mean.weights: ") and "'x'" in message and "nullable" in message
    data["output"]["x"]["nullable"] = False
    assert load_rubric(write(tmp_path, data)).derived["mean"].weights == {"score": 1, "x": 1}


def test_a_weighted_mean_under_a_nullable_object_is_refused_at_load(tmp_path):
    """A leaf of a nullable object is missing whenever the object is null, like a nullable leaf."""
    data = mini(derived={"mean": {"weights": {"score": 1, "parts.a": 1}}})
    data["output"]["parts"] = {"type": "object", "nullable": True, "fields": {"a": {"type": "number"}}}
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, data))
    assert "derived.mean.weights" in str(caught.value) and "parts.a" in str(caught.value)


def test_a_label_with_a_dotted_path_is_refused_at_load_naming_the_file(tmp_path):
    data = mini(output={"ev": {"type": "object", "fields": {"x": {"type": "integer", "min": 0, "max": 2}}},
                        "verdict": {"type": "enum", "values": ["good", "bad"]}},
                rules=[],
                headline={"score": "ev.x / 2 * 100", "pass": "ev.x >= 1", "label": "x is {ev.x}"})
    with pytest.raises(RubricError, match=r"mini\.yaml: .*label 'x is \{ev\.x\}'.*nested keys are written"):
        load_rubric(write(tmp_path, data))
    data["headline"]["label"] = "x is {ev[x]}"
    assert load_rubric(write(tmp_path, data)).score({"ev": {"x": 2}, "verdict": "good"}).label == "x is 2"
