"""Figures over faithfulness verdicts: stats, the week's digest, a comparison of two assistants and the judge against
people's labels, each counting a case (question, reference, passages, answer, model) once."""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from datetime import UTC, datetime
from statistics import mean

from tests.support.cli import ROOT, judgebot, judgebot_json, read_results
from tests.support.sound_replies import rag_example_judge

RUBRIC = "faithfulness"


def judged_example(tmp_path, judge_server, name: str = "rag.csv") -> list[dict[str, str]]:
    """examples/rag.csv graded for faithfulness by a sound judge; its results rows."""
    judge_server.responder = rag_example_judge
    code, out = judgebot(tmp_path, "judge", name, "--rubric", RUBRIC, "--yes", server=judge_server)
    assert code == 0, out
    _, results = read_results(tmp_path / name.replace(".csv", ".results.csv"))
    return results


def test_stats_and_the_digest_count_each_answer_once_with_its_tags(tmp_path, judge_server) -> None:
    shutil.copy(ROOT / "examples" / "rag.csv", tmp_path / "rag.csv")
    results = judged_example(tmp_path, judge_server)
    judged_example(tmp_path, judge_server)  # the same file again: read from the cache, no new case

    code, stats, _ = judgebot_json(tmp_path, "stats", "--days", "0")
    assert code == 0
    figures = {entry["model"]: entry for entry in stats["figures"] if entry["rubric"] == RUBRIC}
    assert set(figures) == {"notes-helper-v1", "notes-helper-v2"}
    for model, entry in figures.items():
        rows = [row for row in results if row["model"] == model]
        assert entry["cases"] == len(rows) and entry["replaced_judgments"] == len(rows)
        assert abs(entry["mean_headline"] - mean(float(row["headline"]) for row in rows)) < 0.01
        assert entry["tag_cases"] == dict(Counter(row["result_tag"] for row in rows))
        assert entry["passed_cases"] == sum(row["passed"] == "true" for row in rows)
    # the answer that contradicts its passage is v1's, and it fails whatever else it gets right
    assert figures["notes-helper-v1"]["tag_cases"].get("Contradicted") == 1

    week = datetime.now(UTC).strftime("%G-W%V")
    code, digest, _ = judgebot_json(tmp_path, "digest", "--week", week)
    assert code == 0 and digest["cases"] == len(results)
    lines = {entry["model"]: entry for entry in digest["figures"] if entry["rubric"] == RUBRIC}
    assert {model: line["tag_cases"] for model, line in lines.items()} == {
        model: entry["tag_cases"] for model, entry in figures.items()}


def test_two_assistants_compared_on_the_questions_both_answered(tmp_path, judge_server) -> None:
    shutil.copy(ROOT / "examples" / "rag.csv", tmp_path / "rag.csv")
    results = judged_example(tmp_path, judge_server)
    code, found, _ = judgebot_json(tmp_path, "compare", "--model", "notes-helper-v1", "--model", "notes-helper-v2")
    assert code == 0
    [rubric] = found["rubrics"]
    by_model = {model: {row["question"]: float(row["headline"]) for row in results if row["model"] == model}
                for model in ("notes-helper-v1", "notes-helper-v2")}
    both = set(by_model["notes-helper-v1"]) & set(by_model["notes-helper-v2"])
    assert rubric["rubric"] == RUBRIC and rubric["paired_questions"] == len(both) == 4
    assert [left["question"] for left in rubric["only_b"]] and not rubric["only_a"]
    moved = [by_model["notes-helper-v2"][q] - by_model["notes-helper-v1"][q] for q in both]
    assert abs(rubric["difference"]["mean"] - mean(moved)) < 0.01
    assert rubric["b_higher_questions"] == sum(d > 0 for d in moved)


def test_people_label_a_claim_list_pass_or_fail_and_its_tag_and_calibration_reads_them(tmp_path, judge_server) -> None:
    with (ROOT / "examples" / "rag.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    # A person agrees with the judge on every answer but one: the answer with no claim, which they fail
    labeled = tmp_path / "labeled.csv"
    shutil.copy(ROOT / "examples" / "rag.csv", tmp_path / "plain.csv")
    results = judged_example(tmp_path, judge_server, name="plain.csv")
    verdicts = {(row["question"], row["model"]): row for row in results}
    for row in rows:
        verdict = verdicts[(row["question"], row["model"])]
        row["human_result_tag"] = verdict["result_tag"]
        row["human_pass"] = "false" if verdict["result_tag"] == "No claims" else verdict["passed"]
    with labeled.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    judged_example(tmp_path, judge_server, name="labeled.csv")

    code, found, _ = judgebot_json(tmp_path, "calibration", "--rubric", RUBRIC)
    assert code == 0 and found["labels"] == len(rows)
    pass_fail = found["figures"]["pass_fail"]
    no_claims = sum(row["result_tag"] == "No claims" for row in results)
    assert no_claims == 1
    assert pass_fail["judge_only_passed_cases"] == no_claims and pass_fail["people_only_passed_cases"] == 0
    assert found["figures"]["tag"] is not None
