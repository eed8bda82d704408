"""Tests for bot.rubric: loading and validating rubric files, the seed rubrics' rules, scores and schemas."""

from __future__ import annotations

import argparse
import copy
import logging
import re
from pathlib import Path

import pytest

from bot.rubric import Rubric, RubricError, builtin_dir, load_rubric, load_rubrics
from tests.support.rubric_files import mini, seed_data, write

SEEDS = ("eth", "academic", "benchmark")


# --- loading valid files ------------------------------------------------------------------------------------


def test_seed_rubrics_load(rubrics):
    assert [r.name for r in rubrics] == ["academic", "benchmark", "eth"]
    for rubric in rubrics:
        assert rubric.source == builtin_dir() / f"{rubric.name}.yaml"
        assert rubric.version == "1.0"
        assert rubric.goldens


def test_a_valid_file_loads(tmp_path):
    rubric = load_rubric(write(tmp_path, mini()))
    assert rubric.name == "mini"
    assert rubric.source == tmp_path / "mini.yaml"
    output, problems = rubric.validate_reply({"score": 2, "verdict": "good", "why": "ok"})
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.label, scoring.tag) == (100.0, True, "good 2/2", "good")


def test_numeric_version_becomes_text(tmp_path):
    rubric = load_rubric(write(tmp_path, mini(version=2)))
    assert rubric.version == "2"


def test_yml_suffix_loads_and_other_files_are_ignored(tmp_path):
    write(tmp_path, mini("extra"), name="extra").rename(tmp_path / "extra.yml")
    (tmp_path / "notes.txt").write_text("not a rubric: [", encoding="utf-8")
    (tmp_path / "README.md").write_text("# rubrics", encoding="utf-8")
    found = load_rubrics(tmp_path)
    assert len(found) == 4
    assert found.get("extra").source == tmp_path / "extra.yml"


def test_extra_directory_overrides_a_builtin_by_name(tmp_path):
    data = seed_data("eth")
    data["version"] = "9.9"
    data["system"] = data["system"] + "\nBe extra strict.\n"
    write(tmp_path, data)
    found = load_rubrics(tmp_path)
    assert len(found) == 3
    eth = found.get("eth")
    assert eth.version == "9.9"
    assert eth.source == tmp_path / "eth.yaml"
    assert found.get("auditor") is eth
    assert eth.content_hash != load_rubrics().get("eth").content_hash


def test_content_hash_ignores_wording_but_not_grading(tmp_path):
    base = load_rubric(write(tmp_path, mini()))
    retitled = load_rubric(write(tmp_path, mini(title="Another title", description="Other words.",
                                                aliases=["x-y"])))
    assert retitled.content_hash == base.content_hash
    regraded = load_rubric(write(tmp_path, mini(system="Grade the answer harshly.")))
    assert regraded.content_hash != base.content_hash
    rescored = load_rubric(write(tmp_path, mini(headline={**mini()["headline"], "pass": "score >= 2"})))
    assert rescored.content_hash != base.content_hash


# --- broken files name the file and the field -------------------------------------------------------------


BROKEN = {
    "bad-field-type": (
        lambda d: d["output"]["score"].update(type="integr"),
        ["output.score.type"],
    ),
    "min-above-max": (
        lambda d: d["output"]["score"].update(min=5, max=1),
        ["output.score", "'min' (5.0) is above 'max' (1.0)"],
    ),
    "enum-without-values": (
        lambda d: d["output"]["verdict"].pop("values"),
        ["output.verdict", "non-empty 'values'"],
    ),
    "min-on-a-string": (
        lambda d: d["output"]["why"].update(min=1),
        ["output.why", "'min'/'max' apply to integer and number fields"],
    ),
    "unknown-field-key": (
        lambda d: d["output"]["score"].update(maximum=3),
        ["output.score.maximum", "Extra inputs are not permitted"],
    ),
    "misspelt-field-key": (
        lambda d: d["output"]["score"].update(mx=3),
        ["output.score.mx: Extra inputs are not permitted. Did you mean 'max'?"],
    ),
    "misspelt-top-level-key": (
        lambda d: d.update(goldnes=[]),
        ["goldnes: Extra inputs are not permitted. Did you mean 'goldens'?"],
    ),
    "misspelt-key-in-a-list-field": (
        lambda d: d["output"].update(notes={"type": "list", "items": {"type": "string", "nulable": True}}),
        ["output.notes.items.nulable: Extra inputs are not permitted. Did you mean 'nullable'?"],
    ),
    "misspelt-key-of-a-rule": (
        lambda d: d["rules"][0].update(chek="score == 2"),
        ["rules.0.chek: Extra inputs are not permitted. Did you mean 'check'?"],
    ),
    "reserved-alias": (
        lambda d: d.update(aliases=["ok", "Stats"]),
        ["aliases.1: 'Stats' is a word judgebot keeps for a command (`/judge stats`)", "Choose another alias"],
    ),
    "alias-of-two-words": (
        lambda d: d.update(aliases=["my rubric"]),
        ["aliases.0: 'my rubric' is not one word"],
    ),
    "missing-headline": (
        lambda d: d.pop("headline"),
        ["headline", "Field required"],
    ),
    "unknown-top-level-key": (
        lambda d: d.update(temperature=0),
        ["temperature", "Extra inputs are not permitted"],
    ),
    "missing-placeholder": (
        lambda d: d.update(user_template="Q: $question\nR: $reference\n"),
        ["user_template", "$answer"],
    ),
    "unknown-placeholder": (
        lambda d: d.update(user_template="Q: $question\nR: $reference\nA: $answer\nM: $model\n"),
        ["user_template", "model"],
    ),
    "bad-dollar": (
        lambda d: d.update(user_template="Costs $5. $question $reference $answer"),
        ["user_template", "$$"],
    ),
    "rule-syntax": (
        lambda d: d["rules"][0].update(check="score ==="),
        ["rules.0.check", "score ==="],
    ),
    "rule-without-message": (
        lambda d: d["rules"][0].pop("message"),
        ["rules.0.message", "Field required"],
    ),
    "headline-syntax": (
        lambda d: d["headline"].update(score="score / (2 * 100"),
        ["headline.score"],
    ),
    "derived-both-ways": (
        lambda d: d.update(derived={"mean": {"weights": {"score": 1}, "expr": "score * 2"}}),
        ["derived.mean", "exactly one of 'weights' or 'expr'"],
    ),
    "derived-zero-weights": (
        lambda d: d.update(derived={"mean": {"weights": {"score": 0}}}),
        ["derived.mean", "positive total"],
    ),
    "multiline-description": (
        lambda d: d.update(description="line one\nline two"),
        ["description", "one line"],
    ),
    "bad-name": (
        lambda d: d.update(name="Mini Rubric"),
        ["name: 'Mini Rubric' is not a rubric name: use lowercase letters a-z, digits"],
    ),
    "golden-missing-answer": (
        lambda d: d.update(goldens=[{"name": "g", "question": "q", "reference": "r", "expect": {}}]),
        ["goldens.0.answer", "Field required"],
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_file_names_file_and_field(tmp_path, case):
    data = mini()
    BROKEN[case][0](data)
    path = write(tmp_path, data, name="mini")
    with pytest.raises(RubricError) as caught:
        load_rubric(path)
    message = str(caught.value)
    assert message.startswith("mini.yaml: ")
    for part in BROKEN[case][1]:
        assert part in message, message


SELF_CHECK = {
    "rule-unknown-name": (
        lambda d: d["rules"].append({"check": "scor == 1", "message": "typo"}),
        ["rule could not be checked", "scor", "Did you mean 'score'?"],
    ),
    "headline-unknown-name": (
        lambda d: d["headline"].update(score="scor / 2 * 100"),
        ["'scor' is not defined", "Did you mean 'score'?"],
    ),
    "unknown-function": (
        lambda d: d["rules"].append({"check": "lenn(why) > 0", "message": "typo"}),
        ["'lenn' not defined", "Did you mean 'len'?"],
    ),
    "label-misspelt-key": (
        lambda d: d["headline"].update(label="{verdikt} {score}"),
        ["label", "'verdikt'", "Did you mean 'verdict'?"],
    ),
    "tag-not-an-enum": (
        lambda d: d["headline"].update(tag="score"),
        ["headline.tag: 'score' is of type integer; the tag must be an enum field"],
    ),
    "pass-not-a-boolean": (
        lambda d: d["headline"].update({"pass": "score"}),
        ["pass 'score' gave 2, not true or false"],
    ),
    "pass-a-string": (
        lambda d: d["headline"].update({"pass": "score >= 1 and verdict"}),
        ["pass 'score >= 1 and verdict' gave 'good', not true or false"],
    ),
    "headline-out-of-range": (
        lambda d: d["headline"].update(score="score * 100"),
        ["outside 0..100"],
    ),
    "label-unknown-key": (
        lambda d: d["headline"].update(label="{verdict} {confidence}"),
        ["label", "confidence"],
    ),
    # A weight or the tag naming a field the reply does not have: today a bare KeyError escapes load_rubric.
    "derived-unknown-path": (
        lambda d: d.update(derived={"mean": {"weights": {"scores": 1}}}),
        ["'scores' is not a number field of the output. Did you mean 'score'?"],
    ),
    "tag-unknown-path": (
        lambda d: d["headline"].update(tag="verdikt"),
        ["no field 'verdikt' in the output. Did you mean 'verdict'?"],
    ),
    "golden-unknown-path": (
        lambda d: d.update(goldens=[{"name": "g1", "question": "q", "reference": "r", "answer": "a",
                                     "expect": {"confidence": [1, 2]}}]),
        ["goldens.g1.expect", "confidence"],
    ),
}


@pytest.mark.parametrize("case", list(SELF_CHECK))
def test_formula_errors_fail_at_load(tmp_path, case):
    data = mini()
    SELF_CHECK[case][0](data)
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, data))
    message = str(caught.value)
    assert message.startswith("mini.yaml: ")
    for part in SELF_CHECK[case][1]:
        assert part in message, message


def test_yaml_syntax_error_names_the_file(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text("name: mini\noutput: {score: [unclosed\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"^mini\.yaml: cannot read the file"):
        load_rubric(path)


def test_top_level_list_names_the_file(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text("- name: mini\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"^mini\.yaml: expected a mapping"):
        load_rubric(path)


def test_empty_file_names_the_file(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(RubricError, match=r"^mini\.yaml: expected a mapping"):
        load_rubric(path)


def test_non_utf8_file_names_the_file(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_bytes("name: mini\ntitle: caf\xe9\n".encode("latin-1"))
    with pytest.raises(RubricError, match=r"^mini\.yaml: cannot read the file"):
        load_rubric(path)


def test_name_must_match_the_file_name(tmp_path):
    path = write(tmp_path, mini("mini"), name="other")
    with pytest.raises(RubricError, match=r"^other\.yaml: name 'mini' must match the file name 'other'"):
        load_rubric(path)


def test_a_broken_file_is_left_out_and_reported_while_the_others_load(tmp_path):
    write(tmp_path, mini("good"))
    bad = mini("bad")
    bad["output"]["score"]["type"] = "float"
    write(tmp_path, bad)
    found = load_rubrics(tmp_path)
    assert [r.name for r in found] == ["academic", "benchmark", "eth", "good"]
    assert [(b.path, b.problem.split(":")[0]) for b in found.broken] == [(tmp_path / "bad.yaml", "output.score.type")]
    assert str(found.broken[0]).startswith("bad.yaml: output.score.type: Input should be 'integer'")
    with pytest.raises(RubricError, match=r"'bad' cannot be used until its file is fixed: bad\.yaml: output\.score"):
        found.get("bad")
    assert found.find("bad") is None


def test_every_broken_file_is_reported(tmp_path):
    write(tmp_path, mini("one", headline={**mini()["headline"], "pas": "score >= 1"}))
    (tmp_path / "two.yaml").write_text("name: two\noutput: {score: [unclosed\n", encoding="utf-8")
    write(tmp_path, mini("three"), name="four")
    found = load_rubrics(tmp_path)
    assert [b.path.name for b in found.broken] == ["four.yaml", "one.yaml", "two.yaml"]
    assert "must match the file name 'four'" in found.broken[0].problem
    assert found.broken[1].problem.startswith("headline.pas: Extra inputs are not permitted. Did you mean 'pass'?")
    assert found.broken[2].problem.startswith("cannot read the file")
    assert len(found) == 3


def test_missing_extra_dir_is_an_error(tmp_path):
    with pytest.raises(RubricError, match="does not exist"):
        load_rubrics(tmp_path / "nowhere")


def test_a_name_or_alias_used_twice_leaves_both_files_out(tmp_path):
    write(tmp_path, mini("mine", aliases=["bench"]))
    found = load_rubrics(tmp_path)
    assert [r.name for r in found] == ["academic", "eth"]
    assert found.find("bench") is None and found.find("mine") is None and found.find("benchmark") is None
    problems = {b.path.name: b.problem for b in found.broken}
    assert problems == {
        "benchmark.yaml": "name or alias 'bench' is also used by mine.yaml; neither is used until one is renamed",
        "mine.yaml": "name or alias 'bench' is also used by benchmark.yaml; neither is used until one is renamed",
    }


def test_a_name_or_alias_used_twice_is_found_in_any_case(tmp_path):
    write(tmp_path, mini("mine", aliases=["ETH-Audit"]))
    write(tmp_path, mini("yours", aliases=["Mine"]))
    found = load_rubrics(tmp_path)
    assert sorted(b.path.name for b in found.broken) == ["eth.yaml", "mine.yaml", "yours.yaml"]
    assert "'eth-audit' is also used by mine.yaml" in str(found.broken[0])


def test_yaml_and_yml_files_of_one_name_are_both_reported(tmp_path):
    write(tmp_path, mini("mini"))
    write(tmp_path, mini("mini"), name="mini").rename(tmp_path / "mini.yml")
    write(tmp_path, mini("mini"))
    found = load_rubrics(tmp_path)
    assert [str(b) for b in found.broken] == [
        "mini.yaml: mini.yml defines the rubric 'mini' too; keep one of the files",
        "mini.yml: mini.yaml defines the rubric 'mini' too; keep one of the files",
    ]
    assert found.find("mini") is None


def test_a_broken_team_file_does_not_fall_back_to_the_builtin_of_its_name(tmp_path):
    data = seed_data("eth")
    data["headline"]["tag"] = "result-tag"
    write(tmp_path, data)
    found = load_rubrics(tmp_path)
    assert found.find("eth") is None and found.find("auditor") is None
    with pytest.raises(RubricError) as caught:
        found.get("eth")
    assert "eth.yaml: headline.tag: no field 'result-tag' in the output. Did you mean 'result_tag'?" in str(caught.value)


def test_list_with_min_items_loads(tmp_path):
    """A rubric may require a non-empty list; the load-time self check must not reject it."""
    data = mini()
    data["output"]["evidence"] = {"type": "list", "items": {"type": "string"}, "min_items": 1}
    rubric = load_rubric(write(tmp_path, data))
    _, problems = rubric.validate_reply({"score": 2, "verdict": "good", "why": "ok", "evidence": []})
    assert problems and problems[0].startswith("evidence:")


def test_number_with_min_only_loads(tmp_path):
    """A lower bound without an upper one (e.g. a count of at least 1) is a valid field."""
    data = mini()
    data["output"]["sources"] = {"type": "integer", "min": 2}
    rubric = load_rubric(write(tmp_path, data))
    _, problems = rubric.validate_reply({"score": 2, "verdict": "good", "why": "ok", "sources": 1})
    assert problems and problems[0].startswith("sources:")


# --- looking rubrics up -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "name"),
    [("eth", "eth"), ("ETH", "eth"), (" auditor ", "eth"), ("strict", "eth"), ("Bench", "benchmark"),
     ("five", "benchmark"), ("acad", "academic"), ("University", "academic")],
)
def test_get_by_name_or_alias(rubrics, key, name):
    assert rubrics.get(key).name == name


@pytest.mark.parametrize(("typo", "suggestion"), [("ethh", "eth"), ("academik", "academic"),
                                                  ("benchmrk", "benchmark"), ("auditr", "eth")])
def test_unknown_name_suggests_the_closest(rubrics, typo, suggestion):
    with pytest.raises(RubricError) as caught:
        rubrics.get(typo)
    message = str(caught.value)
    assert f"No rubric named {typo!r}." in message
    assert f"Did you mean {suggestion!r}?" in message
    assert "Available: academic, benchmark, eth." in message


def test_unknown_name_without_a_close_match(rubrics):
    with pytest.raises(RubricError) as caught:
        rubrics.get("zzzzzzzz")
    assert "Did you mean" not in str(caught.value)
    assert "Available: academic, benchmark, eth." in str(caught.value)


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


# --- names people can type, and the README's example --------------------------------------------------------


@pytest.mark.parametrize("word", ["help", "stats", "history", "rubrics", "default", "digest", "calibration", "none",
                                  "budget", "samples", "label", "check"])
def test_a_rubric_named_like_a_command_is_left_out_naming_the_file(tmp_path, word):
    write(tmp_path, mini(word, aliases=[]))
    found = load_rubrics(tmp_path)
    assert len(found) == 3 and found.find(word) is None
    assert [str(b) for b in found.broken] == [
        f"{word}.yaml: name: '{word}' is a word judgebot keeps for a command (`/judge {word}`), so this rubric could "
        "never be chosen. Rename the rubric and its file"]


def test_the_kept_words_hold_every_word_of_judge_and_of_the_command_line():
    from bot.cli.main import build_parser
    from bot.rubric.loading import RESERVED_WORDS
    from bot.slack.commands import USAGE

    slash = set(re.findall(r"`/judge ([a-z]+)", USAGE))
    assert {"help", "rubrics", "history", "stats", "default", "digest"} <= slash
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    rubrics_actions = next(a for a in commands.choices["rubrics"]._actions if a.dest == "action").choices
    assert {"serve", "judge", "rubrics"} <= set(commands.choices)
    assert slash | set(commands.choices) | set(rubrics_actions) <= RESERVED_WORDS


def test_a_name_longer_than_the_schema_name_allows_is_refused(tmp_path):
    longest = "r" * 56
    assert load_rubric(write(tmp_path, mini(longest))).name == longest
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, mini(longest + "s")))
    assert str(caught.value) == (f"{longest}s.yaml: name: '{longest}s' is 57 characters long; a rubric name has at "
                                 "most 56 (the judge's schema name is limited to 64). Shorten the name and the file name")


@pytest.mark.parametrize("name", ["Mini", "café", "mini.v2", "mini rubric", "2nd", "mini/2"])
def test_a_name_the_schema_name_rule_refuses_is_refused_saying_what_a_name_holds(tmp_path, name):
    with pytest.raises(RubricError) as caught:
        load_rubric(write(tmp_path, mini(name), name="mini"))
    assert str(caught.value) == (
        f"mini.yaml: name: {name!r} is not a rubric name: use lowercase letters a-z, digits, \"-\" and \"_\", starting "
        "with a letter (it is typed after /judge and names the schema the judge is sent)")


async def test_the_longest_name_gives_a_schema_name_that_openai_accepts(tmp_path, judge_server, make_client):
    from bot.judge.judgment import judge
    from bot.records import Triple

    longest = "r-" * 28  # 56 characters, every kind of character a name may hold but digits and "_"
    rubric = load_rubric(write(tmp_path, mini(longest)))
    await judge(rubric, Triple(question="Q", reference="R", answer="A"), make_client(max_retries=0))
    sent = judge_server.bodies()[0]["response_format"]["json_schema"]["name"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", sent) and len(sent) == 64, sent


def readme_example() -> str:
    section = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split("## Rubric files")[1]
    found = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert found, "the rubric format section has an example"
    return found.group(1)


def test_the_readme_example_loads_as_a_rubric(tmp_path):
    (tmp_path / "eth.yaml").write_text(readme_example(), encoding="utf-8")
    rubric = load_rubric(tmp_path / "eth.yaml")
    output, problems = rubric.validate_reply({"correctness": 2, "completeness": 1, "result_tag": "Correct",
                                              "reasoning": "names myStudies"})
    assert problems == []
    scoring = rubric.score(output)
    assert (scoring.headline, scoring.passed, scoring.tag, scoring.derived) == (75.0, True, "Correct", {"overall": 1.7})


def test_the_readme_example_marks_exactly_the_required_keys():
    from bot.rubric.model import Headline, Rule

    marked: dict[str, bool] = {}
    for line in readme_example().splitlines():
        if found := re.match(r"^((?: |- )*)(\w+):[^#]*(?:#(.*))?$", line):
            indent, key, comment = found.groups()
            marked[f"{len(indent)}:{key}"] = "required" in (comment or "")
    models = {0: Rubric, 2: Headline, 4: Rule}  # top level, headline's keys, a rule's keys (after "  - ")
    for depth, model in models.items():
        for name, field in model.model_fields.items():
            key = f"{depth}:{field.alias or name}"
            if key in marked or field.is_required():
                assert marked.get(key) == field.is_required(), (key, marked.get(key))


# --- the command line and the bot report the files left out -------------------------------------------------


def test_rubrics_check_fails_while_a_file_is_broken_and_the_list_shows_why(tmp_path, judge_server):
    from tests.support.cli import flat, judgebot

    team = tmp_path / "team"
    team.mkdir()
    write(team, mini("good"))
    code, out = judgebot(tmp_path, "rubrics", "check", "good", server=judge_server, RUBRICS_DIR=str(team))
    assert code == 0, out
    write(team, mini("bad", rules=[{"check": "scor == 2", "message": "typo"}]))
    code, out = judgebot(tmp_path, "rubrics", "check", "good", server=judge_server, RUBRICS_DIR=str(team))
    assert code == 2, out
    text = flat(out)
    assert f"valid {team / 'good.yaml'} (0 goldens)" in text
    assert (f"broken {team / 'bad.yaml'}: rule could not be checked: 'scor == 2' failed: 'scor' is not defined for "
            "expression 'scor == 2'. Did you mean 'score'?") in text
    assert "1 rubric file(s) left out until fixed; the other rubrics can be used." in text
    code, out = judgebot(tmp_path, "rubrics", "check", "bad", server=judge_server, RUBRICS_DIR=str(team))
    assert code == 2 and "error: The rubric 'bad' cannot be used until its file is fixed: bad.yaml: rule" in flat(out)
    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    assert code == 0, out
    assert re.findall(r"^│ ([\w-]+)\s+│", out, re.MULTILINE) == ["academic", "benchmark", "eth", "good"]
    assert f"broken {team / 'bad.yaml'}: rule could not be checked" in flat(out)
    assert judge_server.bodies() == []


async def test_the_bot_starts_with_the_good_rubrics_and_reports_the_broken_files_escaped(bot_settings, slack_server,
                                                                                         tmp_path, caplog):
    from bot.slack.server import start_bot
    from tests.support.slack_side import SIGNING_SECRET, SlackSide

    folder = tmp_path / "team"
    folder.mkdir()
    write(folder, mini("good"))
    write(folder, mini("ok"), name="<!channel>")
    write(folder, {**mini("evil"), "<@U0BOSS>": 1})
    caplog.set_level(logging.WARNING, logger="bot.slack.server")
    running = await start_bot(bot_settings.model_copy(update={"rubrics_dir": folder}), host="127.0.0.1")
    try:
        logged = [record.getMessage() for record in caplog.records if record.name == "bot.slack.server"]
        assert f"rubric file left out until it is fixed: {folder / '<!channel>.yaml'}: name 'ok' must match the " \
               "file name '<!channel>'" in logged
        assert any(line.startswith(f"rubric file left out until it is fixed: {folder / 'evil.yaml'}: <@U0BOSS>: ")
                   for line in logged), logged
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        listed = await slack.command("rubrics")
        text = listed.text()
        assert "`good`" in text and "Rubric files left out until they are fixed" in text
        assert "• &lt;!channel&gt;.yaml: name 'ok' must match the file name '&lt;!channel&gt;'" in text
        assert "• evil.yaml: &lt;@U0BOSS&gt;: Extra inputs are not permitted" in text
        assert "<!channel>" not in text and "<@U0BOSS>" not in text
        await slack.command("good")
        assert (await slack_server.await_for("views.open"))[0].params["view"]
        refused = await slack.command("evil")
        assert "The rubric 'evil' cannot be used until its file is fixed: evil.yaml: &lt;@U0BOSS&gt;" in refused.text()
        assert "<@U0BOSS>" not in refused.text()
    finally:
        await running.stop()


def test_an_unknown_name_is_matched_as_closely_as_any_other_suggestion(rubrics):
    with pytest.raises(RubricError) as caught:  # 'strict' (an alias) is half like 'strxxx': too far for a suggestion
        rubrics.get("strxxx")
    assert "Did you mean" not in str(caught.value)
