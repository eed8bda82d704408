"""`judgebot calibration`, `calibration check` and `labels export` against labels saved in a real history.

Eight rows are judged by `judgebot judge` against the local judge; people's labels and votes are then saved with the
store's own functions. The labels, by answer (the judge's tag -> what people say):

    A1 Correct -> Agree vote (Correct, pass)          A5 Generic -> label Refusal 0/0 (fail)
    A2 Correct -> label Correct 2/2 (pass), and a     A6 Generic -> Agree vote (Generic, fail)
                  Disagree vote by the same person,   A7 Refusal -> label Refusal 0/0 (fail), 14 days ago
                  which the label stands in for       A8 Hallucination -> label Refusal 0/0 (fail), 14 days ago
    A3 Correct -> label Generic 0/0 (fail)
    A4 Correct -> Disagree vote (fail, no tag)

A Correct verdict passes (completeness 2), every other tag fails.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import col

from bot.figures import iso_week
from bot.llm.prices import builtin_prices
from bot.records import Triple
from bot.rubric import RubricSet
from bot.runs.estimate import Estimate, estimate_rows
from bot.store import Label, Store, iter_judgments, record_feedback, save_label, utcnow
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support.cli import flat, history, judgebot, judgebot_json, write_rows
from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import eth_reply, triple_of

ROWS = [  # question, reference, answer, the tag the first judge gives
    ("How do I register for exams?", "In myStudies (ETHIS).", "Register in myStudies.", "Correct"),
    ("Where do I see my grades?", "In myStudies.", "- use myStudies (ETHIS), under Performance", "Correct"),
    ("Where do I book a sports course?", "Through ASVZ.", "Book it at ASVZ.", "Correct"),
    ("How do I print as staff?", "With Web Print.", "Print with Web Print.", "Correct"),
    ("How do I get a VPN?", "Install Cisco Secure Client from the IT shop.", "Ask your administrator.", "Generic"),
    ("When are the exams?", "In the exam session listed in myStudies.", "Check your calendar.", "Generic"),
    ("Where is my payslip?", "In Staffnet, under ESS.", "I don't know.", "Refusal"),
    ("Where do I reset my password?", "In the Identity Portal.", "Use portal.eth-login.example.", "Hallucination"),
]
ANSWERS = [answer for _, _, answer, _ in ROWS]
PEOPLE = {  # answer -> the tag people give (None: a Disagree vote, which names no tag)
    ANSWERS[0]: "Correct", ANSWERS[1]: "Correct", ANSWERS[2]: "Generic", ANSWERS[3]: None,
    ANSWERS[4]: "Refusal", ANSWERS[5]: "Generic", ANSWERS[6]: "Refusal", ANSWERS[7]: "Refusal",
}
HEADER = ["question", "reference", "answer", "model", "human_pass", "human_correctness", "human_completeness",
          "human_result_tag", "label_source", "judge_pass", "judge_tag", "judge_model", "rubric_version", "labeled_by",
          "labeled_at", "judgment_id"]
TWO_WEEKS_AGO = timedelta(days=14)

# Pass/fail, (judge, people): A1 TT, A2 TT, A3 TF, A4 TF, A5 FF, A6 FF, A7 FF, A8 FF: 6 of 8 agree, each a case.
# Wilson 95 %, p = 0.75, n = 8, z² = 3.8415: centre (0.75 + 3.8415/16) / (1 + 3.8415/8) = 0.6689, half
# 1.96 * sqrt(0.75 * 0.25 / 8 + 3.8415/256) / 1.4802 = 0.2596: 40.9 % to 92.9 %.
# The judge passes 4 of 8, people 2; McNemar over cases: 2 only the judge passed, none only people: exact p = 0.5.
# Kappa: the judge says pass 4, fail 4; people 2 and 6; expected agreement (4*2 + 4*6) / 64 = 0.5, so
# (0.75 - 0.5) / (1 - 0.5) = 0.50; under 20 cases kappa prints no interval (none held its coverage there).
# Tags where people gave one (not A4): 7 pairs, 4 agree (A1, A2, A6, A7); judge C3 G2 R1 H1, people C2 G2 R3 H0;
# expected (3*2 + 2*2 + 1*3 + 1*0) / 49 = 13/49; kappa (28 - 13) / (49 - 13) = 15/36 = 0.42.
FIRST_JUDGE = ["agreement on pass/fail 75% (6/8), 95% CI 41%-93% (Wilson); few labeled cases (n = 8)",
               "pass rates the judge passes 50%, people 25%, McNemar p = 0.50; few labeled cases (n = 8)",
               "kappa on pass/fail 0.50 (no interval under 20 cases); few labeled cases (n = 8)",
               "kappa on the tag 0.42 (no interval under 20 cases) over 7 labels; few labeled cases (n = 7)"]


def tag_reply(tags: dict[str, str]) -> Callable[[dict[str, Any]], Reply]:
    """A judge that gives each answer the tag of `tags`."""
    def reply(body: dict[str, Any]) -> Reply:
        return eth_reply(tags[triple_of(body)[2]])
    return reply


def estimate_of_rows(rubrics: RubricSet, store: Store, judges: list[str], samples: int) -> Estimate:
    """The estimate of judging the eight rows again."""
    triples = [Triple(question=question, reference=reference, answer=answer) for question, reference, answer, _ in ROWS]
    return estimate_rows(rubrics.get("eth"), triples, judges=judges, samples=samples, prices=builtin_prices(), store=store)


def labeled_history(tmp_path: Path, judge_server: FakeJudgeServer) -> Store:
    """The eight rows judged from the terminal, then labeled and voted on as the module docstring says."""
    judge_server.responder = tag_reply({answer: tag for _, _, answer, tag in ROWS})
    write_rows(tmp_path / "answers.csv", ["question", "reference", "answer", "model"],
               [[question, reference, answer, "bot-v1"] for question, reference, answer, _ in ROWS])
    code, out = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    judged = {judgment.answer: judgment for judgment in iter_judgments(store, 1)}
    assert [judged[answer].tag for answer in ANSWERS] == [tag for _, _, _, tag in ROWS]

    def label(answer: str, user: str, tag: str) -> None:
        correctness, completeness = (2, 2) if tag == "Correct" else (0, 0)
        save_label(store, judgment=judged[answer], user_id=user, source="correction", passed=tag == "Correct",
                   pass_from="rule", values={"correctness": correctness, "completeness": completeness,
                                             "result_tag": tag}, tag=tag, headline=(correctness + completeness) * 25, note=None)

    record_feedback(store, judgment_id=judged[ANSWERS[0]].id, user_id="u1", agree=True)
    label(ANSWERS[1], "u2", "Correct")
    record_feedback(store, judgment_id=judged[ANSWERS[1]].id, user_id="u2", agree=False)
    label(ANSWERS[2], "u3", "Generic")
    record_feedback(store, judgment_id=judged[ANSWERS[3]].id, user_id="u4", agree=False)
    label(ANSWERS[4], "u5", "Refusal")
    record_feedback(store, judgment_id=judged[ANSWERS[5]].id, user_id="u6", agree=True)
    label(ANSWERS[6], "u7", "Refusal")
    label(ANSWERS[7], "u8", "Refusal")
    earlier = [judged[ANSWERS[6]].id, judged[ANSWERS[7]].id]
    with store.session() as session:
        session.exec(update(Label).where(col(Label.judgment_id).in_(earlier))
                     .values(updated_at=utcnow() - TWO_WEEKS_AGO))
        session.commit()
    return store


def lines_of(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines()]


def wilson(successes: int, n: int) -> list[float]:
    """The 95 % Wilson score interval, from its formula."""
    z2, share = 1.959964 ** 2, successes / n
    centre, half = share + z2 / (2 * n), 1.959964 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return [(centre - half) / (1 + z2 / n), (centre + half) / (1 + z2 / n)]


def test_calibration_prints_the_figures_and_warns(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    store = labeled_history(tmp_path, judge_server)

    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "auditor")

    assert code == 0, stderr
    assert (found["rubric"], found["channel"], found["since"], found["judge_model"]) == ("eth", None, None, None)
    assert found["labels"] == 8  # the Disagree vote of u2 on A2 is not counted: u2's label stands in for it
    figures = found["figures"]
    pass_fail = figures["pass_fail"]  # the figures FIRST_JUDGE says in words
    assert (pass_fail["pass_fail_labels"], pass_fail["agreeing_labels"], pass_fail["cases"]) == (8, 6, 8)
    assert pass_fail["agreement"] == 0.75 and pass_fail["interval"] == pytest.approx(wilson(6, 8))
    assert pass_fail["interval"] == pytest.approx([0.409, 0.929], abs=5e-4)
    assert (pass_fail["judge_pass_rate"], pass_fail["people_pass_rate"], pass_fail["mcnemar_p"]) == (0.5, 0.25, 0.5)
    assert (pass_fail["judge_only_passed_cases"], pass_fail["people_only_passed_cases"]) == (2, 0)
    assert pass_fail["kappa"]["value"] == pytest.approx(0.5) and pass_fail["kappa"]["interval"] is None
    assert (figures["tag"]["labels"], figures["tag"]["agreeing_labels"]) == (7, 4)
    assert figures["tag"]["kappa"]["value"] == pytest.approx(15 / 36) and figures["tag"]["kappa"]["interval"] is None
    # The confusion matrix, judge's tag in rows and people's in columns
    assert figures["confusion"] == {"classes": ["Correct", "Generic", "Refusal", "Hallucination"],
                                    "labels": [[2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 1, 0]]}
    # judge - people where people gave values (not A4): correctness A3 +2 (2 against 0), others 0: 2/7 = 0.29 higher,
    # and as much apart; completeness A3 +2, A5 +1 (Generic's 1 against 0): 3/7 = 0.43. Linear weighted kappa on the
    # 0-2 scale, sklearn's cohen_kappa_score(weights="linear", labels=[0, 1, 2]): correctness 0.6957, completeness
    # 0.5714
    for criterion, apart, kappa in (("correctness", 2 / 7, 0.6957), ("completeness", 3 / 7, 0.5714)):
        gap = figures["score_gaps"][criterion]
        assert (gap["labels"], gap["cases"]) == (7, 7), criterion
        assert gap["mean_signed_difference"] == pytest.approx(apart) and gap["mean_abs_difference"] == pytest.approx(apart)
        assert gap["weighted_kappa"]["value"] == pytest.approx(kappa, abs=1e-4), criterion
    # A7 and A8 two weeks ago (both agree on fail); the other six this week, 4 of 6 agreeing: 67 %
    now = datetime.now(UTC)
    assert [(week["week"], week["labels"], week["agreement"]) for week in figures["weeks"]] == [
        (iso_week(now - TWO_WEEKS_AGO), 2, 1.0), (iso_week(now), 6, pytest.approx(4 / 6))]
    assert figures["labels_by_judge_model"] == {"judge-cli": 8}
    assert found["doubts"] == []  # 75 % is not below the default 75 %, and 8 labels are under 20
    assert found["judge_in_use"]["judge_model"] == "judge-cli"

    code, out = judgebot(tmp_path, "calibration", "--rubric", "auditor")  # as a person reads it
    text, lines = flat(out), lines_of(out)
    assert code == 0 and "Calibration of eth (ETH institutional knowledge audit), all channels and the terminal, all " \
        "time" in text, out
    assert all(figure in lines for figure in FIRST_JUDGE), out
    assert "Correct 2 1 0 0 3" in lines and "total 2 2 3 0 7" in lines, out  # the matrix, with its totals
    assert "warning" not in out

    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth", "--since", "7d")
    pass_fail = found["figures"]["pass_fail"]
    assert code == 0 and found["labels"] == 6 and found["since"].endswith("Z"), stderr
    assert (pass_fail["agreeing_labels"], pass_fail["pass_fail_labels"]) == (4, 6)
    assert pass_fail["interval"] == pytest.approx(wilson(4, 6))
    assert pass_fail["kappa"]["value"] == pytest.approx(0.40)  # [[2, 2], [0, 2]]: statsmodels' cohens_kappa 0.40

    settings = {"JUDGE_MODEL": "judge-new", "CALIBRATION_MIN_AGREEMENT": "0.8", "CALIBRATION_MIN_LABELS": "8"}
    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth", **settings)
    assert code == 0 and [doubt["kind"] for doubt in found["doubts"]] == ["low_agreement", "other_judge"], stderr
    assert found["judge_in_use"]["judge_model"] == "judge-new"
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", **settings)
    text = flat(out)
    assert code == 0, out
    assert ("warning: the judge agrees with people on pass/fail in 75% of 8 labeled cases, below 80% "
            "(CALIBRATION_MIN_AGREEMENT)") in text
    assert "warning: 8 of 8 labels were given on verdicts of judge-cli, but the judge now is judge-new" in text

    # Five of the labeled judgments under an older version of the rubric; one label short of the warning's minimum.
    with store.session() as session:
        session.exec(update(JudgmentTable).where(col(JudgmentTable.answer).in_(ANSWERS[:5]))
                     .values(rubric_hash="0123456789abcdef"))
        session.commit()
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", CALIBRATION_MIN_AGREEMENT="0.8",
                         CALIBRATION_MIN_LABELS="9")
    text = flat(out)
    assert code == 0 and "below 80%" not in text and "verdicts of" not in text, out
    assert "warning: 5 of 8 labels were given under another version of eth (0123456789abcdef; loaded now: 1.0" in text

    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", "--channel", "C0NOLABELS")
    assert code == 0 and "No labels found (eth (ETH institutional knowledge audit), channel C0NOLABELS" in flat(out)
    code, found, _ = judgebot_json(tmp_path, "calibration", "--rubric", "eth", "--channel", "C0NOLABELS")
    assert code == 0 and (found["channel"], found["labels"], found["figures"]) == ("C0NOLABELS", 0, None)


def test_labels_of_a_jury_are_held_against_the_configured_jury(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    store = labeled_history(tmp_path, judge_server)
    with store.session() as session:  # as if a jury of two had judged every row: the history names it m1+m2
        session.exec(update(JudgmentTable).values(judge_model="judge-a+judge-b"))
        session.commit()

    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", JUDGES="judge-a,judge-b")
    assert code == 0 and "judge models judge-a+judge-b (8)" in lines_of(out), out
    assert "verdicts of" not in flat(out)  # the jury that judges now is the one the labels were given on

    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", JUDGES="judge-a,judge-c")
    assert ("warning: 8 of 8 labels were given on verdicts of judge-a+judge-b, but the judge now is judge-a+judge-c "
            "(JUDGES)") in flat(out)
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth")
    assert "but the judge now is judge-cli (JUDGE_MODEL)" in flat(out)


def test_no_labels_says_how_to_get_some(tmp_path: Path) -> None:
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", "--since", "30d")
    text = flat(out)
    assert code == 0, out
    assert "No labels found (eth (ETH institutional knowledge audit), all channels and the terminal, last 30 days)" in text
    assert "the Correct it button on a result card in Slack, the Agree / Disagree buttons, or human_pass" in text
    code, out = judgebot(tmp_path, "calibration", "--rubric", "eth", "--since", "last week")
    assert code == 2 and "--since 'last week': give 7d, 30d, all or a date such as 2026-11-01" in flat(out)


def test_exported_labels_are_checked_again_by_an_agreeing_judge(tmp_path: Path, judge_server: FakeJudgeServer,
                                                                 rubrics: RubricSet) -> None:
    store = labeled_history(tmp_path, judge_server)

    code, out = judgebot(tmp_path, "labels", "export", "--rubric", "eth", "--out", "labels.csv")

    assert code == 0 and "8 labels of eth written to labels.csv" in flat(out), out
    with (tmp_path / "labels.csv").open(encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == HEADER
        exported = {row["answer"]: row for row in reader}
    judged = {judgment.answer: judgment for judgment in iter_judgments(store, 1)}
    agree = exported[ANSWERS[0]]  # an Agree vote: the judge's own values as the person's
    assert [agree[name] for name in HEADER[:-2]] == [
        ROWS[0][0], ROWS[0][1], ANSWERS[0], "bot-v1", "true", "2", "2", "Correct", "vote: agree", "true", "Correct",
        "judge-cli", "1.0", "u1"]
    assert agree["judgment_id"] == str(judged[ANSWERS[0]].id)
    assert "'" + ANSWERS[1] in exported  # a cell starting with "-" is kept from running as a formula
    assert exported["'" + ANSWERS[1]]["labeled_by"] == "u2"  # the label, not u2's Disagree vote on the same verdict
    disagree = exported[ANSWERS[3]]  # a Disagree vote: pass/fail only
    assert [disagree[name] for name in HEADER[4:11]] == ["false", "", "", "", "vote: disagree", "true", "Correct"]
    # a correction: pass/fail from eth's pass rule on the person's own values, and said so
    assert [exported[ANSWERS[4]][name] for name in HEADER[4:11]] == ["false", "0", "0", "Refusal", "rule", "false",
                                                                     "Generic"]

    code, out = judgebot(tmp_path, "labels", "export", "--rubric", "eth", server=judge_server)
    assert code == 0 and out.startswith(",".join(HEADER)) and "8 labels of eth." in out

    # Today's judge gives what people gave (A4's Disagree names no tag: a failing Generic fits it)
    judge_server.responder = tag_reply({answer: tag or "Generic" for answer, tag in PEOPLE.items()})
    asked_before = len(judge_server.bodies())
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "labels.csv", "--fresh",
                         "--min-labels", "8", "--min-agreement", "0.6", server=judge_server)

    text, lines = flat(out), lines_of(out)
    assert code == 0, out
    # the estimate of the 8 rows (tests/runs/test_estimate.py holds it against real token counts); judge-cli has no price
    expected = estimate_of_rows(rubrics, store, ["judge-cli"], 1)
    assert f"Judging the labeled rows again: {expected.text()}; replies sized from the last 8 replies of eth" in text
    assert expected.text().endswith("out): price unknown for judge-cli (JUDGE_PRICES can add it)")
    assert len(judge_server.bodies()) == asked_before + 8
    # the judge read the answer as it was, without the quote the export put before its "-"
    assert ANSWERS[1] in [triple_of(body)[2] for body in judge_server.bodies()[asked_before:]]
    today, before = text.index("Today's judge: judge-cli, eth 1.0"), text.index("The labeled verdicts' judges: judge-cli")
    assert today < before
    # 8 of 8 agree: Wilson low (1 + 3.8415/16) / 1.4802 - 1.96 * sqrt(3.8415/256) / 1.4802 = 0.8384 - 0.1622 = 67.6 %;
    # kappa 1 on pass/fail (2 pass, 6 fail on both sides) and on the 7 tags, with no interval at 8 cases: the
    # large-sample one of a perfect table has no width, "1.00-1.00"
    assert "agreement on pass/fail 100% (8/8), 95% CI 68%-100% (Wilson); few labeled cases (n = 8)" in lines
    assert "pass rates the judge passes 25%, people 25%, McNemar p = 1.0; few labeled cases (n = 8)" in lines
    assert "kappa on pass/fail 1.00 (no interval under 20 cases); few labeled cases (n = 8)" in lines
    assert "kappa on the tag 1.00 (no interval under 20 cases) over 7 labels; few labeled cases (n = 7)" in lines
    assert all(figure in lines for figure in FIRST_JUDGE), out  # the first judge, from the judge_ columns
    assert "ok: at least 8 labeled cases with pass/fail on both sides (--min-labels): 8" in text
    assert ("ok: the 95% interval of agreement above 60% (--min-agreement): 68% at its lower bound (agreement 100% "
            "(8/8), 95% CI 68%-100% (Wilson); few labeled cases (n = 8))") in text
    assert "ok: the judge both passes and fails where people do: the judge passes 25%, people 25%" in text
    assert history(tmp_path, "SELECT source, total_rows, status, source_name FROM run WHERE id = 2") == [
        ("check", 8, "done", "labels.csv")]
    assert history(tmp_path, "SELECT count(*) FROM label") == [(5,)]  # a check saves no labels of its own
    # its 8 verdicts are kept apart: the terminal's tallies, stats and history still count the 8 rows judged once
    assert history(tmp_path, "SELECT channel_key, sum(rows) FROM judgment_tally GROUP BY channel_key ORDER BY 1") == [
        ("", 8), ("#calibration-check", 8)]
    code, out = judgebot(tmp_path, "history", "--limit", "50")
    assert code == 0 and flat(out).count("bot-v1") == 8, out


def test_a_channel_check_asks_before_many_rows_and_fails_below_the_bar(tmp_path: Path, judge_server: FakeJudgeServer,
                                                                       rubrics: RubricSet) -> None:
    store = labeled_history(tmp_path, judge_server)
    with store.session() as session:
        session.exec(update(JudgmentTable).values(channel_id="C0LABELED"))
        session.commit()
    # Today's judge gets every pass/fail wrong: people's passes fail, their fails pass
    judge_server.responder = tag_reply({answer: "Generic" if tag == "Correct" else "Correct"
                                        for answer, tag in PEOPLE.items()})
    asked_before = len(judge_server.bodies())
    check = ["calibration", "check", "--rubric", "eth", "--channel", "C0LABELED", "--judge-model", "gpt-4o-mini"]

    code, out = judgebot(tmp_path, *check, server=judge_server, CALIBRATION_CONFIRM_ROWS="1")

    text = flat(out)
    assert code == 2, out
    # gpt-4o-mini: $0.15 in and $0.60 out per million tokens
    expected = estimate_of_rows(rubrics, store, ["gpt-4o-mini"], 1)
    cost = (expected.tokens_in * 0.15 + expected.tokens_out * 0.60) / 1_000_000
    assert f"Judging the labeled rows again: about ${cost:.4f} for 8 rows with gpt-4o-mini (" in text
    assert f"Judging the labeled rows again: {expected.text()};" in text
    assert "8 rows is more than CALIBRATION_CONFIRM_ROWS (1) and there is no terminal to ask; pass --yes" in text
    assert len(judge_server.bodies()) == asked_before  # nothing judged, nothing billed

    code, out = judgebot(tmp_path, *check, "--yes", server=judge_server, CALIBRATION_CONFIRM_ROWS="1")

    text, lines = flat(out), lines_of(out)
    assert code == 1, out
    assert len(judge_server.bodies()) == asked_before + 8
    # 0 of 8: Wilson high (0 + 3.8415/16) / 1.4802 + 1.96 * sqrt(3.8415/256) / 1.4802 = 0.1622 + 0.1622 = 32.4 %.
    # Kappa on pass/fail: the judge passes 6, people 2; expected (6*2 + 2*6) / 64 = 0.375: (0 - 0.375) / 0.625 = -0.60;
    # mcnemar([[0, 6], [2, 0]], exact=True) p = 0.2890625. Tags: judge G2 C5 against people C2 G2 R3, none agree;
    # expected (2*2 + 5*2) / 49: -14 / 35 = -0.40.
    assert "agreement on pass/fail 0% (0/8), 95% CI 0%-32% (Wilson); few labeled cases (n = 8)" in lines
    assert "pass rates the judge passes 75%, people 25%, McNemar p = 0.29; few labeled cases (n = 8)" in lines
    assert "kappa on pass/fail -0.60 (no interval under 20 cases); few labeled cases (n = 8)" in lines
    assert "kappa on the tag -0.40 (no interval under 20 cases) over 7 labels; few labeled cases (n = 7)" in lines
    assert "The labeled verdicts' judges: judge-cli" in text
    assert all(figure in lines for figure in FIRST_JUDGE), out  # the channel's own verdicts against the same labels
    assert "below: the 95% interval of agreement above 80% (--min-agreement): 0% at its lower bound" in text
    assert "below: at least 20 labeled cases with pass/fail on both sides (--min-labels): 8" in text

    # The same judge again takes its verdicts from the history, at no cost; a bar of 0 is met
    code, out = judgebot(tmp_path, *check, "--min-agreement", "0", "--min-labels", "0", "--point", server=judge_server)
    assert code == 0 and "ok: agreement of at least 0% (--min-agreement, --point): 0%" in flat(out), out
    assert len(judge_server.bodies()) == asked_before + 8

    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", server=judge_server)
    assert code == 2 and "give --labels FILE" in flat(out)
    code, out = judgebot(tmp_path, *check, "--judges", "a,b", server=judge_server)
    assert code == 2 and "give --judge-model (one judge) or --judges / --judges-file (a jury), not both" in flat(out)


def test_a_check_asks_the_configured_jury_every_sample(tmp_path: Path, judge_server: FakeJudgeServer,
                                                       rubrics: RubricSet) -> None:
    store = labeled_history(tmp_path, judge_server)
    code, out = judgebot(tmp_path, "labels", "export", "--rubric", "eth", "--out", "labels.csv")
    assert code == 0, out
    judge_server.responder = tag_reply({answer: tag or "Generic" for answer, tag in PEOPLE.items()})
    asked_before = len(judge_server.bodies())

    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "labels.csv", "--samples", "2",
                         "--yes", "--min-labels", "8", "--point", server=judge_server, JUDGES="gpt-4o-mini,judge-cli")

    text, lines = flat(out), lines_of(out)
    assert code == 0, out
    # JUDGES is today's jury: 2 judges x 2 samples x 8 rows; the priced judge's part is counted, the other named
    expected = estimate_of_rows(rubrics, store, ["gpt-4o-mini", "judge-cli"], 2)
    once = estimate_of_rows(rubrics, store, ["gpt-4o-mini"], 1)
    priced = estimate_of_rows(rubrics, store, ["gpt-4o-mini"], 2)
    assert (expected.tokens_in, expected.tokens_out) == (4 * once.tokens_in, 4 * once.tokens_out)
    assert expected.cost_usd == priced.cost_usd and expected.unpriced == ["judge-cli"]
    assert (f"Judging the labeled rows again: 8 rows x 2 samples with gpt-4o-mini + judge-cli ({expected.tokens_in:,} "
            f"tokens in, {expected.tokens_out:,} out): about ${priced.cost_usd:.4f} for the judges of known price; "
            "price unknown for judge-cli") in text
    bodies = judge_server.bodies()[asked_before:]
    assert sorted(Counter(body["model"] for body in bodies).items()) == [("gpt-4o-mini", 16), ("judge-cli", 16)]
    assert "Today's judge: gpt-4o-mini+judge-cli, 2 samples each, eth 1.0" in text
    assert "agreement on pass/fail 100% (8/8), 95% CI 68%-100% (Wilson); few labeled cases (n = 8)" in lines
    assert history(tmp_path, "SELECT judge_model, samples FROM run WHERE source = 'check'") == [
        ("gpt-4o-mini+judge-cli", 2)]


def test_a_check_told_no_labels_says_which_to_give(tmp_path: Path) -> None:
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth")
    assert code == 2 and "say which labeled rows to check: give --labels FILE" in flat(out) and "not both" not in out
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "x.csv", "--channel", "C1")
    assert code == 2 and "not both" in flat(out)


def test_stats_count_every_label_correction_and_vote(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    labeled_history(tmp_path, judge_server)
    # A second file, of another model under test, whose human_pass column labels its rows: the judge passes the
    # Correct answer (people agree) and the Refusal fails (people say it should have passed).
    write_rows(tmp_path / "labeled.csv", ["question", "reference", "answer", "model", "human_pass"], [
        [ROWS[0][0], ROWS[0][1], "Register for exams in myStudies.", "bot-v2", "yes"],
        [ROWS[6][0], ROWS[6][1], "No idea.", "bot-v2", "yes"]])
    judge_server.responder = tag_reply({"Register for exams in myStudies.": "Correct", "No idea.": "Refusal"})
    code, out = judgebot(tmp_path, "judge", "labeled.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out

    code, stats, stderr = judgebot_json(tmp_path, "stats")

    assert code == 0, stderr
    people = {figures["model"]: figures["people"] for figures in stats["figures"]}
    # bot-v1: every label, correction and vote on its eight rows, one per person and case (u2's label stands in for
    # their Disagree vote on the same row): 6 of 8 agree, as calibration counts them (Wilson 41%-93%); the votes the
    # tally counts are 2 of 4 agreeing, u2's replaced Disagree among them
    assert history(tmp_path, "SELECT sum(votes), sum(agreeing) FROM judgment_tally WHERE model_key = 'bot-v1'") == [
        (4, 2)]
    assert (people["bot-v1"]["agreeing_labels"], people["bot-v1"]["pass_fail_labels"], people["bot-v1"]["cases"]) == \
        (6, 8, 8)
    assert people["bot-v1"]["agreement"] == 0.75 and people["bot-v1"]["interval"] == pytest.approx(wilson(6, 8))
    # bot-v2: the file's two labels, 1 of 2 (Wilson 9%-91%)
    assert (people["bot-v2"]["agreeing_labels"], people["bot-v2"]["pass_fail_labels"]) == (1, 2)
    assert people["bot-v2"]["interval"] == pytest.approx(wilson(1, 2))
    code, out = judgebot(tmp_path, "stats", COLUMNS="400")  # in the terminal's column "people agree"
    assert code == 0 and "75% (6/8), 95% CI 41%-93% (Wilson); few labeled cases (n = 8)" in flat(out), out


def test_a_second_person_labeling_the_same_cases_does_not_pass_a_failing_check(tmp_path: Path,
                                                                                judge_server: FakeJudgeServer) -> None:
    # Ten cases, the judge right on every one (Correct passes, Generic fails): 100% agreement, but ten cases are
    # fewer than --min-labels 20. Labeled again by a second person, they are twenty labels of the same ten cases.
    cases = [(f"Question {n}?", "In myStudies.", f"Answer {n}.", n < 6) for n in range(10)]
    judge_server.responder = tag_reply({answer: "Correct" if passed else "Generic" for _, _, answer, passed in cases})
    header = ["question", "reference", "answer", "human_pass", "labeled_by"]
    once = [[question, reference, answer, "yes" if passed else "no", "ana"]
            for question, reference, answer, passed in cases]
    write_rows(tmp_path / "once.csv", header, once)
    write_rows(tmp_path / "twice.csv", header, once + [[*row[:4], "ben"] for row in once])
    check = ["calibration", "check", "--rubric", "eth", "--yes"]

    code, out = judgebot(tmp_path, *check, "--labels", "once.csv", server=judge_server)
    assert code == 1 and "below: at least 20 labeled cases with pass/fail on both sides (--min-labels): 10" in flat(out)

    code, out = judgebot(tmp_path, *check, "--labels", "twice.csv", server=judge_server)
    text = flat(out)
    assert code == 1, out
    assert "below: at least 20 labeled cases with pass/fail on both sides (--min-labels): 10 (20 labels)" in text
    # each case weighs one: the same agreement and interval as one label each (Wilson over 10: 72%-100%)
    assert ("agreement on pass/fail 100% (20 labels of 10 cases, each case weighing one), 95% CI 72%-100% (score "
            "interval over cases); few labeled cases (n = 10)") in text
    assert "labels 20 (10 cases)" in lines_of(out)


def test_a_judge_that_passes_everything_fails_the_default_gate(tmp_path: Path, judge_server: FakeJudgeServer) -> None:
    # 40 cases, the judge passes all, people fail 2: agreement 95% (38/40), Wilson 83.5%-98.6%, clears 80% at its
    # lower bound; kappa is undefined. The default gate fails it all the same, saying why.
    cases = [(f"Question {n}?", "In myStudies.", f"Answer {n}.", n >= 2) for n in range(40)]
    judge_server.responder = tag_reply({answer: "Correct" for _, _, answer, _ in cases})
    write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "human_pass"],
               [[question, reference, answer, "yes" if passed else "no"] for question, reference, answer, passed in cases])

    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "labels.csv", "--yes",
                         server=judge_server)

    text = flat(out)
    assert code == 1, out
    assert "ok: at least 20 labeled cases with pass/fail on both sides (--min-labels): 40" in text
    assert "ok: the 95% interval of agreement above 80% (--min-agreement): 83% at its lower bound" in text
    assert ("below: the judge both passes and fails where people do: the judge said pass every time, people passed "
            "95%") in text
    assert "pass rates the judge passes 100%, people 95%, McNemar p = 0.50" in text  # 2 cases apart: 2 / 2^2

    # The same as one JSON document (its verdicts now read from the history): the figures and each condition's
    code, found, _ = judgebot_json(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "labels.csv",
                                   "--yes", server=judge_server, documented=(0, 1))
    assert code == 1 and found is not None
    assert (found["rubric"], found["labels_from"], found["judges"], found["cases"], found["unscored_cases"]) == (
        "eth", "labels.csv", "judge-cli", 40, 0)
    pass_fail = found["today"]["pass_fail"]
    assert (pass_fail["cases"], pass_fail["agreement"], pass_fail["judge_pass_rate"], pass_fail["people_pass_rate"]) \
        == (40, 0.95, 1.0, 0.95)
    assert round(pass_fail["interval"][0], 3) == 0.835 and pass_fail["kappa"]["value"] is None
    assert found["labeled_verdicts"] is None  # the file gives no judge_ columns
    gate = found["gate"]
    assert (gate["min_agreement"], gate["min_labels"], gate["min_kappa"], gate["point"], gate["passed"]) == (
        0.8, 20, None, False, False)
    assert [condition["met"] for condition in gate["conditions"]] == [True, True, False]
