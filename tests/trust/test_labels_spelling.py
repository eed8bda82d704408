"""Label columns named as people write them: `human_<field>` matches a rubric's field whatever its case, spaces,
hyphens and underscores (benchmark's "Factual Accuracy" too), a header that fits two fields alike is refused, and
every bad cell is refused with its row and column, never read as a label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from statsmodels.stats.proportion import proportion_confint

from bot.rubric.rubric_file import rubric_from_text
from bot.trust.labels import ambiguity_text, ambiguous_columns, label_columns, read_label, repeated_columns
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.openai_server import Reply
from tests.support.replies import triple_of
from tests.support.rubric_files import mini, write

FIVE = ("Factual Accuracy", "Relevance", "Clarity", "Language Consistency", "Conciseness")
WEIGHTS = (0.40, 0.15, 0.15, 0.15, 0.15)  # benchmark's overall_weighted; it passes at 3.5


def benchmark_reply(scores: tuple[float, ...], overall: float) -> Reply:
    """A valid benchmark verdict: the five parameters and the judge's own Overall."""
    return Reply.json({**dict(zip(FIVE, scores, strict=True)), "Overall": overall})


def weighted(scores: tuple[float, ...]) -> float:
    return sum(w * s for w, s in zip(WEIGHTS, scores, strict=True))


def test_a_benchmark_field_is_named_by_any_spelling(rubrics) -> None:
    benchmark = rubrics.get("benchmark")
    for header in ("human_Factual Accuracy", "human_factual_accuracy", "Human Factual-Accuracy", "HUMAN factual  accuracy",
                   "human-FACTUAL_accuracy"):
        assert label_columns(["question", header], benchmark) == ({header: "Factual Accuracy"}, []), header
    headers = ["human_Factual Accuracy", "human_factual_accuracy", "Human Language Consistency", "human_overall",
               "human_overall_weighted", "human_Factual Accuracies"]
    columns, unknown = label_columns(headers, benchmark)
    assert columns == {"human_Factual Accuracy": "Factual Accuracy", "Human Language Consistency": "Language Consistency",
                       "human_overall": "Overall"}
    # a derived figure is computed, not labeled; a near miss is reported, never guessed at
    assert unknown == ["human_overall_weighted", "human_Factual Accuracies"]
    assert repeated_columns(headers, benchmark) == [("human_factual_accuracy", "human_Factual Accuracy")]
    label = read_label({"human_Factual Accuracy": "4.5", "Human Language Consistency": " 2 "}, columns, benchmark)
    assert label.values == {"Factual Accuracy": 4.5, "Language Consistency": 2.0}


def test_a_nested_field_keeps_working_whatever_its_spelling(rubrics) -> None:
    academic = rubrics.get("academic")
    headers = ["human_evaluation.factuality.score", "Human Evaluation.Coverage.Score", "human_evaluation.clarity"]
    columns, unknown = label_columns(headers, academic)
    assert columns == {"human_evaluation.factuality.score": "evaluation.factuality.score",
                       "Human Evaluation.Coverage.Score": "evaluation.coverage.score"}
    assert unknown == ["human_evaluation.clarity"]  # an object is no value to label
    label = read_label({"human_evaluation.factuality.score": "4", "Human Evaluation.Coverage.Score": "5"}, columns,
                       academic)
    assert label.values == {"evaluation.factuality.score": 4, "evaluation.coverage.score": 5}


def twins_rubric() -> dict:
    """A rubric with two fields that are spelled alike but for case and separators."""
    return mini("twins", output={"Factual Accuracy": {"type": "integer", "min": 0, "max": 2},
                                 "factual_accuracy": {"type": "integer", "min": 0, "max": 2},
                                 "verdict": {"type": "enum", "values": ["good", "bad"]}},
                rules=None, headline={"score": "verdict == 'good' and 100 or 0", "pass": "verdict == 'good'",
                                      "label": "{verdict}", "tag": "verdict"})


def test_a_header_that_fits_two_fields_alike_is_refused_with_a_sentence() -> None:
    twins = rubric_from_text(yaml.safe_dump(twins_rubric(), sort_keys=False))
    headers = ["human_Factual-Accuracy", "human_factual_accuracy", "human_Factual Accuracy", "human_verdict"]
    columns, unknown = label_columns(headers, twins)
    # spelled as the rubric spells a field, a header names it; otherwise it is refused, not guessed
    assert columns == {"human_factual_accuracy": "factual_accuracy", "human_Factual Accuracy": "Factual Accuracy",
                       "human_verdict": "verdict"}
    assert unknown == []
    assert ambiguous_columns(headers, twins) == [("human_Factual-Accuracy", ("Factual Accuracy", "factual_accuracy"))]
    assert ambiguity_text("human_Factual-Accuracy", ("Factual Accuracy", "factual_accuracy")) == (
        'column human_Factual-Accuracy could name any of the fields "Factual Accuracy" and "factual_accuracy" of this '
        "rubric, so it was not read as a label; name one exactly as the rubric spells it, such as human_Factual Accuracy")


@pytest.mark.parametrize("cell, problem", [
    ("nan", "is not a number"), ("NaN", "is not a number"), ("inf", "is not a number"), ("-inf", "is not a number"),
    ("Infinity", "is not a number"), ("1e400", "is not a number"), ("abc", "is not a number"), ("3,5", "is not a number"),
    ("7", "is outside 1..5"), ("0.5", "is outside 1..5"), ("-2", "is outside 1..5"),
])
def test_every_bad_number_cell_is_refused_naming_its_column(rubrics, cell: str, problem: str) -> None:
    benchmark = rubrics.get("benchmark")
    columns, _ = label_columns(["Human Factual-Accuracy"], benchmark)
    with pytest.raises(ValueError, match=f"^Human Factual-Accuracy {cell!r} {problem}"):
        read_label({"Human Factual-Accuracy": cell}, columns, benchmark)


def test_an_unknown_enum_value_or_pass_word_is_refused(rubrics) -> None:
    eth = rubrics.get("eth")
    columns, _ = label_columns(["Human Result Tag", "human-pass"], eth)
    for cells, problem in [({"Human Result Tag": "Great"}, "Human Result Tag 'Great' is not one of Correct"),
                           ({"Human Result Tag": "nan"}, "Human Result Tag 'nan' is not one of"),
                           ({"human-pass": "nan"}, "human-pass 'nan' is not true or false")]:
        with pytest.raises(ValueError, match=problem):
            read_label(cells, columns, eth)
    assert read_label({"Human Result Tag": "generic"}, columns, eth).values == {"result_tag": "Generic"}


def test_cli_reads_and_measures_peoples_scores_on_the_benchmark_rubric(tmp_path: Path, judge_server) -> None:
    # (the judge's five scores, its Overall; the person's five scores), for the rows people labeled well
    labeled = {"a1": ((5, 4, 4, 4, 4), 4.5, (4, 5, 3, 5, 4)),     # both pass
               "a2": ((4, 4, 4, 4, 4), 4.0, (2, 3, 3, 5, 3)),     # the judge passes, the person fails (2.90)
               "a3": ((2, 2, 3, 3, 3), 2.5, (1.5, 2, 3, 3, 2)),   # both fail
               "a4": ((5, 5, 5, 5, 5), 5.0, (5, 4.5, 5, 5, 4))}   # both pass
    bad = {"a5": "nan", "a6": "NaN", "a7": "inf", "a8": "-inf", "a9": "7", "a10": "n/a"}
    replies = {answer: benchmark_reply(judge, overall) for answer, (judge, overall, _) in labeled.items()}
    replies |= {answer: benchmark_reply((3, 3, 3, 3, 3), 3.0) for answer in bad}
    judge_server.responder = lambda body: replies[triple_of(body)[2]]
    header = ["question", "reference", "answer", "human_Factual Accuracy", "human_relevance", "Human Clarity",
              "human-language-consistency", "HUMAN_Conciseness", "human_overall_weighted"]
    rows = [[f"q{answer}", "the facts", answer, *map(str, person), ""] for answer, (_, _, person) in labeled.items()]
    rows += [[f"q{answer}", "the facts", answer, cell, "3", "3", "3", "3", ""] for answer, cell in bad.items()]
    source = write_rows(tmp_path / "bench.csv", header, rows)

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "benchmark", server=judge_server)

    assert code == 0, out
    text = flat(out)
    assert "column human_overall_weighted names no field of this rubric that can be labeled" in text
    # each bad cell refused with its row (the header is row 1) and column, and the row's label left out whole
    for row, cell in enumerate(bad.values(), start=6):
        assert f"row {row} label not read: human_Factual Accuracy {cell!r} is " in text, (row, text)
    assert "row 10 label not read: human_Factual Accuracy '7' is outside 1..5" in text
    assert history(tmp_path, "SELECT COUNT(*) FROM label") == [(4,)]
    saved = history(tmp_path, "SELECT j.answer, l.passed, l.pass_from, l.\"values\" FROM label l "
                     "JOIN judgment j ON j.id = l.judgment_id ORDER BY j.row_number")
    assert [(answer, passed, source) for answer, passed, source, _ in saved] == [
        ("a1", 1, "rule"), ("a2", 0, "rule"), ("a3", 0, "rule"), ("a4", 1, "rule")]
    assert all(f'"{name}"' in values for *_, values in saved for name in FIVE)

    # the figures, from the person's own values under the rubric's pass rule, against references
    judge_pass = [weighted(judge) >= 3.5 for judge, _, _ in labeled.values()]
    person_pass = [weighted(person) >= 3.5 for _, _, person in labeled.values()]
    assert (judge_pass, person_pass) == ([True, True, False, True], [True, False, False, True])
    agree = sum(j == p for j, p in zip(judge_pass, person_pass, strict=True))
    low, high = proportion_confint(agree, 4, method="wilson")
    assert "The judge against the file's labels (4 labels)" in text
    assert f"agreement on pass/fail 75% (3/4), 95% CI {low:.0%}-{high:.0%} (Wilson)" in text
    assert "the judge passes 75%, people 50%" in text
    for index, name in enumerate(FIVE):
        gap = np.array([judge[index] - person[index] for judge, _, person in labeled.values()])
        side = "higher" if gap.mean() > 0 else "lower"
        assert (f"{name}: the judge scores {abs(gap.mean()):.2f} {side}, mean absolute difference "
                f"{np.abs(gap).mean():.2f} (4 labels)") in text, (name, text)

    # the labels written out name the fields as the rubric spells them, and are read back whole
    code, out = judgebot(tmp_path, "labels", "export", "--rubric", "benchmark", "--out", "export.csv")
    assert code == 0, out
    header = (tmp_path / "export.csv").read_text(encoding="utf-8-sig").splitlines()[0].split(",")
    assert [name for name in header if name.startswith("human_")] == ["human_pass", *(f"human_{f}" for f in FIVE),
                                                                      "human_Overall"]
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "benchmark", "--labels", "export.csv", "--yes",
                         server=judge_server)
    assert code in (0, 1) and "labels 4" in flat(out) and "names no field" not in flat(out), out


def test_cli_refuses_a_column_that_fits_two_fields_in_a_judged_file_and_a_labels_file(tmp_path: Path,
                                                                                      judge_server) -> None:
    team = tmp_path / "team"
    team.mkdir()
    write(team, twins_rubric())
    judge_server.responder = lambda body: Reply.json({"Factual Accuracy": 2, "factual_accuracy": 2, "verdict": "good"})
    write_rows(tmp_path / "twins.csv", ["question", "reference", "answer", "human_Factual-Accuracy", "human_verdict"],
               [["q1", "r", "a1", "1", "bad"], ["q2", "r", "a2", "2", "good"]])
    code, out = judgebot(tmp_path, "judge", "twins.csv", "--rubric", "twins", server=judge_server,
                         RUBRICS_DIR=str(team))
    assert code == 0, out
    text = flat(out)
    assert ('warning: column human_Factual-Accuracy could name any of the fields "Factual Accuracy" and '
            '"factual_accuracy" of this rubric, so it was not read as a label') in text
    assert "The judge against the file's labels (2 labels)" in text  # human_verdict is read
    assert all("Factual Accuracy" not in values and "factual_accuracy" not in values
               for (values,) in history(tmp_path, 'SELECT "values" FROM label'))

    write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "HUMAN factual-accuracy"],
               [["q1", "r", "a1", "1"]])
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "twins", "--labels", "labels.csv",
                         server=judge_server, RUBRICS_DIR=str(team))
    assert code == 2 and "could name any of the fields" in flat(out) and "such as human_Factual Accuracy" in flat(out)
    assert len(judge_server.bodies()) == 2  # refused before anything was judged

