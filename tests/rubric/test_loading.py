"""Tests for bot.rubric's files: loading valid ones, broken ones named with their file and field and left out, looking
rubrics up by name, the names people can type, the documented example, and the files left out as the command line and
the bot report them."""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import pytest

from bot.rubric import Rubric, RubricError, builtin_dir, load_rubric, load_rubrics
from tests.support.openai_server import Reply
from tests.support.rubric_files import SHIPPED, mini, seed_data, write

# --- loading valid files ------------------------------------------------------------------------------------


def test_seed_rubrics_load(rubrics):
    assert [r.name for r in rubrics] == SHIPPED and rubrics.broken == []
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
    assert len(found) == len(SHIPPED) + 1
    assert found.get("extra").source == tmp_path / "extra.yml"


def test_extra_directory_overrides_a_builtin_by_name(tmp_path):
    data = seed_data("eth")
    data["version"] = "9.9"
    data["system"] = data["system"] + "\nBe extra strict.\n"
    write(tmp_path, data)
    found = load_rubrics(tmp_path)
    assert len(found) == len(SHIPPED)
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
        ["goldens.g: a golden gives answer (answer_a and answer_b are for a pairwise rubric)"],
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
    with pytest.raises(RubricError, match=r"^other\.yaml: name: 'mini' must match the file name 'other'"):
        load_rubric(path)


def test_a_broken_file_is_left_out_and_reported_while_the_others_load(tmp_path):
    write(tmp_path, mini("good"))
    bad = mini("bad")
    bad["output"]["score"]["type"] = "float"
    write(tmp_path, bad)
    found = load_rubrics(tmp_path)
    assert [r.name for r in found] == sorted([*SHIPPED, "good"])
    assert [(b.path, b.problem.split(":")[0]) for b in found.broken] == [(tmp_path / "bad.yaml", "output.score.type")]
    assert str(found.broken[0]).startswith("bad.yaml: output.score.type: Input should be 'integer'")
    with pytest.raises(RubricError, match=r"^The rubric file bad\.yaml in RUBRICS_DIR is broken, so the rubric 'bad' cannot "
                                          r"be used until it is fixed \(1 problem\):\n  - output\.score\.type: "):
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
    assert len(found) == len(SHIPPED)


def test_missing_extra_dir_is_an_error(tmp_path):
    with pytest.raises(RubricError, match="does not exist"):
        load_rubrics(tmp_path / "nowhere")


def test_a_team_file_taking_a_shipped_rubrics_name_is_left_out_and_the_shipped_one_stays(tmp_path):
    write(tmp_path, mini("mine", aliases=["bench"]))
    found = load_rubrics(tmp_path)
    assert [r.name for r in found] == SHIPPED
    assert found.find("bench").name == "benchmark" and found.find("mine") is None  # type: ignore[union-attr]
    problems = {b.path.name: b.problem for b in found.broken}
    assert problems == {"mine.yaml": "name or alias 'bench' is a name of the shipped rubric benchmark; rename it to use "
                                     "this file"}


def test_a_name_or_alias_used_twice_is_found_in_any_case(tmp_path):
    write(tmp_path, mini("mine", aliases=["ETH-Audit"]))
    write(tmp_path, mini("yours", aliases=["Mine"]))
    found = load_rubrics(tmp_path)
    assert sorted(b.path.name for b in found.broken) == ["mine.yaml", "yours.yaml"]
    assert found.find("eth-audit").name == "eth"  # type: ignore[union-attr]
    problems = {b.path.name: b.problem for b in found.broken}
    assert "'eth-audit' is a name of the shipped rubric eth" in problems["mine.yaml"]
    assert "'mine' is also used by mine.yaml" in problems["yours.yaml"]


@pytest.mark.parametrize("alias", ["еth", "ｅｔｈ", "eth​", "éth"])
def test_an_alias_that_is_not_plain_ascii_is_refused(tmp_path, alias):
    path = write(tmp_path, mini("mine", aliases=[alias]))
    with pytest.raises(RubricError, match="is not plain ASCII letters, digits"):
        load_rubric(path)


def test_a_full_width_name_typed_finds_the_rubric_it_reads_as(rubrics):
    assert rubrics.get("ｅｔｈ").name == "eth" and rubrics.find("еth") is None  # Cyrillic е: no rubric


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
    assert str(caught.value) == (
        "The rubric file eth.yaml in RUBRICS_DIR is broken, so the rubric 'eth' cannot be used until it is fixed (1 "
        "problem):\n  - headline.tag: no field 'result-tag' in the output. Did you mean 'result_tag'?\nIt replaces the "
        "shipped rubric eth: fix it, or remove it to use the shipped one.")


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
    assert f"Available: {', '.join(SHIPPED)}." in message


def test_unknown_name_without_a_close_match(rubrics):
    with pytest.raises(RubricError) as caught:
        rubrics.get("zzzzzzzz")
    assert "Did you mean" not in str(caught.value)
    assert f"Available: {', '.join(SHIPPED)}." in str(caught.value)


# --- names people can type, and the documented example -------------------------------------------------------


@pytest.mark.parametrize("word", ["help", "stats", "history", "rubrics", "default", "digest", "calibration", "none",
                                  "budget", "samples", "label", "check", "review", "reviewers"])
def test_a_rubric_named_like_a_command_is_left_out_naming_the_file(tmp_path, word):
    write(tmp_path, mini(word, aliases=[]))
    found = load_rubrics(tmp_path)
    assert len(found) == len(SHIPPED) and found.find(word) is None
    assert [str(b) for b in found.broken] == [
        f"{word}.yaml: name: '{word}' is a word judgebot keeps for a command (`/judge {word}`), so this rubric could "
        "never be chosen. Rename the rubric and its file"]


def test_the_kept_words_hold_every_word_of_judge_and_of_the_command_line():
    from bot.cli.parser import build_parser
    from bot.rubric.rubric_file import RESERVED_WORDS
    from bot.slack.commands.parsing import USAGE

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
    assert str(caught.value).startswith(
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
    section = (Path(__file__).parents[2] / "docs" / "rubrics.md").read_text(encoding="utf-8").split("## Rubric files")[1]
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
    from bot.rubric.scoring import Headline, Rule

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


@pytest.mark.slow
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
    assert (f"broken {team / 'bad.yaml'}: rules.0.check: rule could not be checked: 'scor == 2' failed: 'scor' is not "
            "defined for expression 'scor == 2'. Did you mean 'score'?") in text
    assert "1 rubric file(s) left out until fixed; the other rubrics can be used." in text
    code, out = judgebot(tmp_path, "rubrics", "check", "bad", server=judge_server, RUBRICS_DIR=str(team))
    assert code == 2 and ("error: The rubric file bad.yaml in RUBRICS_DIR is broken, so the rubric 'bad' cannot be used until "
                          "it is fixed (1 problem): - rules.0.check: rule could not be checked") in flat(out)
    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    assert code == 0, out
    assert re.findall(r"^│ ([\w-]+)\s+│", out, re.MULTILINE) == sorted([*SHIPPED, "good"])
    assert f"broken {team / 'bad.yaml'}: rules.0.check: rule could not be checked" in flat(out)
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
        assert f"rubric file left out until it is fixed: {folder / '<!channel>.yaml'}: name: 'ok' must match the " \
               "file name '<!channel>'" in logged
        assert any(line.startswith(f"rubric file left out until it is fixed: {folder / 'evil.yaml'}: <@U0BOSS>: ")
                   for line in logged), logged
        slack = SlackSide(slack_server, url=f"http://127.0.0.1:{running.port}/slack/events", secret=SIGNING_SECRET)
        listed = await slack.command("rubrics")
        text = listed.text()
        assert "`good`" in text and "Rubric files left out until they are fixed" in text
        assert "• &lt;!channel&gt;.yaml: name: 'ok' must match the file name '&lt;!channel&gt;'" in text
        assert "• evil.yaml: &lt;@U0BOSS&gt;: Extra inputs are not permitted" in text
        assert "<!channel>" not in text and "<@U0BOSS>" not in text
        await slack.command("good")
        assert (await slack_server.await_for("views.open"))[0].params["view"]
        refused = await slack.command("evil")
        assert ("The rubric file evil.yaml in RUBRICS_DIR is broken, so the rubric 'evil' cannot be used until it is "
                "fixed (1 problem)") in refused.text()
        assert "  - &lt;@U0BOSS&gt;: Extra inputs" in refused.text()
        assert "<@U0BOSS>" not in refused.text()
    finally:
        await running.stop()


def test_an_unknown_name_is_matched_as_closely_as_any_other_suggestion(rubrics):
    with pytest.raises(RubricError) as caught:  # 'strict' (an alias) is half like 'strxxx': too far for a suggestion
        rubrics.get("strxxx")
    assert "Did you mean" not in str(caught.value)


def test_an_unquoted_decimal_version_is_refused_rather_than_shortened(tmp_path):
    path = write(tmp_path, mini())
    path.write_text(path.read_text(encoding="utf-8").replace("version: '1.0'", "version: 1.10"), encoding="utf-8")
    assert "version: 1.10" in path.read_text(encoding="utf-8")
    with pytest.raises(RubricError, match=r"version: 1\.1 was read as a number, so 1\.10 would become 1\.1: quote it"):
        load_rubric(path)


def test_the_rubric_list_says_which_folders_it_read(tmp_path):
    from tests.support.cli import flat, judgebot

    team = tmp_path / "team"
    team.mkdir()
    write(team, mini("mine"))
    code, out = judgebot(tmp_path, "rubrics", RUBRICS_DIR=str(team))
    text = flat(out)
    assert code == 0 and "mine" in text and f"{team} (RUBRICS_DIR)" in text and "(shipped)" in text, out
    code, out = judgebot(tmp_path, "rubrics")
    assert "Add your own to a folder and name it in RUBRICS_DIR" in flat(out)


def test_a_yaml_error_names_the_file_and_the_line_not_a_stand_in(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text('name: mine\nversion: "1"\ntitle: [unclosed\n', encoding="utf-8")
    with pytest.raises(RubricError) as raised:
        load_rubric(path)
    assert str(raised.value).startswith("mine.yaml: cannot read the file: ")
    assert "line 4, column 1" in str(raised.value) and "<unicode string>" not in str(raised.value)


def test_a_rubric_may_grade_without_a_reference_and_its_files_need_no_reference_column(tmp_path, judge_server):
    from tests.support.cli import flat, history, judgebot, read_results, write_rows

    team = tmp_path / "team"
    team.mkdir()
    write(team, mini("plain", user_template="Q: $question\nA: $answer\n"))
    rubric = load_rubric(team / "plain.yaml")
    assert not rubric.uses_reference and load_rubrics().get("eth").uses_reference
    judge_server.responder = lambda body: Reply.json({"score": 2, "verdict": "good", "why": "plain"})
    write_rows(tmp_path / "in.csv", ["question", "answer"], [["Where?", "Here."], ["When?", "Now."]])
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "plain", server=judge_server, RUBRICS_DIR=str(team))
    assert code == 0, out
    assert [row["status"] for row in read_results(tmp_path / "in.results.csv")[1]] == ["scored", "scored"]
    code, out = judgebot(tmp_path, "judge", "--rubric", "plain", "-q", "Why?", "-a", "Because.", server=judge_server,
                         RUBRICS_DIR=str(team))
    assert code == 0 and "good" in out, out
    assert history(tmp_path, "SELECT DISTINCT reference FROM judgment") == [("",)]
    # a rubric that grades against a reference still needs the column, and -r
    code, out = judgebot(tmp_path, "judge", "in.csv", "--rubric", "eth", server=judge_server)
    assert code == 2 and "no reference column" in flat(out), out
    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "Why?", "-a", "Because.", server=judge_server)
    assert code == 2 and "-r REFERENCE" in flat(out), out


def test_a_name_claimed_by_two_files_is_settled_whichever_rubric_is_asked_for_first(tmp_path):
    # Files are validated when first asked for; a name two files claim is settled as if every file had been, even
    # when one of them writes it as a number (which the rubric reads as text).
    write(tmp_path, mini("first", aliases=[2024]))
    write(tmp_path, mini("second", aliases=["2024"]))
    for asked in ("2024", "second", "first"):
        found = load_rubrics(tmp_path)
        assert found.find(asked) is None, asked
        assert sorted(b.path.name for b in found.broken) == ["first.yaml", "second.yaml"]
        assert "'2024' is also used by" in found.broken[0].problem


def test_a_broken_file_is_reported_whether_or_not_its_rubric_was_asked_for(tmp_path):
    write(tmp_path, mini("good"))
    bad = mini("bad")
    bad["headline"] = {**bad["headline"], "pass": "scor >= 1"}
    write(tmp_path, bad)
    found = load_rubrics(tmp_path)
    assert found.get("good").name == "good"  # the good file alone is validated for it
    assert [b.path.name for b in found.broken] == ["bad.yaml"]
    assert "Did you mean 'score'?" in found.broken[0].problem
    again = load_rubrics(tmp_path)
    with pytest.raises(RubricError, match=r"^The rubric file bad\.yaml in RUBRICS_DIR is broken"):
        again.get("bad-alias")
    assert [r.name for r in again] == sorted([*SHIPPED, "good"])
