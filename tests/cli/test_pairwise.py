"""`judgebot judge FILE --rubric pairwise`: each pair shown to the judge in both orders, an inconsistent pair counted
as a tie and listed, position bias measured over pairs, B's win rate with its Wilson-type score interval, and the
results file with one row per pair; figures checked against values computed here by hand and by scipy."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import flat, history, judgebot, judgebot_json, read_results, write_rows
from tests.support.kills import count, kill_when
from tests.support.pairwise_judge import PicksFirst, PrefersMarked

HEADER = ["question", "reference", "answer_a", "answer_b", "model_a", "model_b"]
MARK = "[better]"


def pairs_file(tmp_path: Path, b_better: list[bool | None], *, flip: set[int] = frozenset(), name: str = "pairs.csv",
               models: tuple[str, str] = ("bot-v1", "bot-v2")) -> Path:
    """A file of pairs: in pair i the better answer is B's (True), A's (False) or neither (None); a question in
    `flip` is judged by position by PrefersMarked."""
    rows = []
    for i, better in enumerate(b_better):
        a = f"v1 answer {i}" + (f" {MARK}" if better is False else "")
        b = f"v2 answer {i}" + (f" {MARK}" if better is True else "")
        rows.append([f"question {i}" + (" [flip]" if i in flip else ""), f"reference {i}", a, b, *models])
    return write_rows(tmp_path / name, HEADER, rows)


def score_bounds(values: list[float]) -> tuple[float, float]:
    """The 95% score interval of a win rate with ties as the figures promise it, found here by scipy's root finder:
    the p where (mean - p)^2 = z^2 (p (1 - p) - spread) / n, spread the ties' s (1 - s) over n + 1."""
    from scipy import optimize, stats

    n, mean, z = len(values), float(np.mean(values)), stats.norm.ppf(0.975)
    spread = sum(value * (1 - value) for value in values) / (n + 1)

    def gap(p: float) -> float:
        return (mean - p) ** 2 - z * z * (p * (1 - p) - spread) / n

    low = 0.0 if mean == 0 else optimize.brentq(gap, 0.0, mean)
    high = 1.0 if mean == 1 else optimize.brentq(gap, mean, 1.0)
    return low, high


def sign_p(wins: int, losses: int) -> float:
    n = wins + losses
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n)


def test_pairs_judged_in_both_orders_give_the_win_rate_consistency_and_results(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    better = [True, True, False, True, None, True, False, True, True, True, False, True]  # B 8, A 3, neither 1
    pairs_file(tmp_path, better, flip={2})  # pair 2: A is better, but the judge picks by position there

    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert "Estimate: 24 judgments of pairs (each pair once per order shown) with judge-cli" in text
    # every pair was shown twice, once in each order
    shown = Counter((question, frozenset((first, second))) for question, first, second in judge.seen)
    assert len(judge.seen) == 24 and set(shown.values()) == {2}
    firsts = {(question, first) for question, first, _ in judge.seen}
    assert len(firsts) == 24  # ... with a different answer first each time
    # outcomes: pair 2 inconsistent (A in one order, B in the other) -> a tie; pair 4 a consistent tie
    outcomes = ["B" if b else "A" if b is False else "tie" for b in better]
    outcomes[2] = "tie"
    scores = [{"A": 0.0, "tie": 0.5, "B": 1.0}[o] for o in outcomes]
    rate = sum(scores) / len(scores)
    low, high = score_bounds(scores)
    wins, losses, ties = outcomes.count("B"), outcomes.count("A"), outcomes.count("tie")
    assert sign_p(wins, losses) == pytest.approx(0.109375)  # 8 against 2: printed with two significant digits
    assert (f"bot-v2 over bot-v1: {rate:.0%} (95% CI {low:.0%}-{high:.0%}) of 12 pairs; won {wins}, lost {losses}, "
            f"tied {ties} (1 inconsistent); sign test p = 0.11") in text
    assert "position consistency 92% (11 of 12 pairs named the same winner in both orders; 1 inconsistent" in text
    assert "pairs 12 judged in both orders: 10 with a winner, 2 tied" in text  # the ties have no winner
    # named A (shown first) in: 7 pairs' A-first order won by A... count the judgments by the position they named
    named = Counter()
    for question, first, second in judge.seen:
        if "[flip]" in question:
            named["A"] += 1
        elif MARK in first:
            named["A"] += 1
        elif MARK in second:
            named["B"] += 1
        else:
            named["tie"] += 1
    decisive = named["A"] + named["B"]
    # the test counts pairs: only pair 2 went to one position (the first) in both orders, 1 against 0: p = 1
    assert ("the first answer won in both orders in 1 pair, the second in 0, of 12 pairs judged in both orders (sign "
            f"test p = 1.0); the first answer was picked in {named['A'] / decisive:.0%} of {decisive} judgments that "
            "named a winner") in text
    assert "position bias" not in text
    assert "row 4 inconsistent (A then B): question 2 [flip]" in text
    assert "1 pair sent to review (1 inconsistent): a person says which answer is better" in text
    code, listed, stderr = judgebot_json(tmp_path, "review")
    assert code == 0 and [case["reason"] for case in listed["cases"]] == ["inconsistent"], stderr

    header, rows = read_results(tmp_path / "pairs.results.csv")
    assert header[:7] == ["row", *HEADER]
    assert header[7:] == ["winner", "consistent", "people", "winner_ab", "margin_ab", "reasoning_ab", "status_ab", "error_ab",
                          "flags_ab", "winner_ba", "margin_ba", "reasoning_ba", "status_ba", "error_ba", "flags_ba",
                          "judge_model", "rubric_version", "cached"]
    assert len(rows) == 12
    assert [row["winner"] for row in rows] == outcomes
    # the second order's winner is said in the file's terms: B is the file's answer_b, though the judge saw it first
    assert rows[0]["winner_ab"] == rows[0]["winner_ba"] == "B" and rows[0]["consistent"] == "true"
    assert (rows[2]["winner_ab"], rows[2]["winner_ba"], rows[2]["consistent"]) == ("A", "B", "false")
    assert rows[0]["reasoning_ba"] == "chose A"  # the judge's own words: it saw answer_b as its A
    # the pairs' judgments stay out of every model's figures: they are kept beside the checks
    assert history(tmp_path, "SELECT DISTINCT channel_id FROM judgment") == [("#calibration-check",)]
    code, stats, stderr = judgebot_json(tmp_path, "stats")
    assert code == 0 and stats["figures"] == [], stderr


def test_a_judge_that_always_picks_the_first_answer_shows_its_position_bias(tmp_path: Path, judge_server) -> None:
    judge_server.responder = PicksFirst()
    pairs_file(tmp_path, [True] * 10)

    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert "position consistency 0% (0 of 10 pairs named the same winner in both orders; 10 inconsistent" in text
    # 10 pairs, each won by the first answer in both orders: the exact two-sided sign test over the pairs gives
    # 2 / 2**10 = 0.00195 (over the 20 judgments it would claim 2 / 2**20)
    assert ("the first answer won in both orders in 10 pairs, the second in 0, of 10 pairs judged in both orders "
            "(sign test p = 0.0020): position bias toward the first answer; the first answer was picked in 100% of 20 "
            "judgments") in text
    low, high = score_bounds([0.5] * 10)  # ten ties: not "50% (CI 50%-50%)"
    assert high - low > 0.1
    assert f"bot-v2 over bot-v1: 50% (95% CI {low:.0%}-{high:.0%}) of 10 pairs; won 0, lost 0, tied 10" in text


def test_no_swap_judges_each_pair_once_every_other_pair_b_first(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    pairs_file(tmp_path, [True, True, False, True])

    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--no-swap", "--yes",
                         server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert len(judge.seen) == 4
    assert [first.startswith("v2") for _, first, _ in judge.seen] == [False, True, False, True]  # B first on odd lines
    assert "4 judged in one order each (--no-swap)" in text
    assert "not measured: each pair was judged once (--no-swap), every other pair with B shown first" in text
    _, rows = read_results(tmp_path / "pairs.results.csv")
    assert [row["winner"] for row in rows] == ["B", "B", "A", "B"]
    assert [bool(row["winner_ab"]) for row in rows] == [True, False, True, False]
    assert [row["consistent"] for row in rows] == ["", "", "", ""]


def test_three_models_in_one_file_are_ranked_by_bradley_terry(tmp_path: Path, judge_server) -> None:
    judge_server.responder = PrefersMarked()
    rows = []
    # gold beats silver and bronze, silver beats bronze, with a few upsets
    plan = [("silver", "gold", True)] * 5 + [("gold", "silver", False)] + [("bronze", "gold", True)] * 5
    plan += [("bronze", "silver", True)] * 4 + [("silver", "bronze", True)]
    for i, (a, b, b_better) in enumerate(plan):
        rows.append([f"q{i}", "ref", f"a{i}" + ("" if b_better else f" {MARK}"), f"b{i}" + (f" {MARK}" if b_better
                                                                                            else ""), a, b])
    write_rows(tmp_path / "three.csv", HEADER, rows)

    code, out = judgebot(tmp_path, "judge", "three.csv", "--rubric", "pairwise", "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert "Ranking (Elo scale" in text
    places = [text.index(f" {place} {name} ") for place, name in ((1, "gold"), (2, "silver"), (3, "bronze"))]
    assert places == sorted(places), text
    assert "gold over silver" in text or "silver over gold" in text


def test_mistakes_are_refused_with_a_sentence(tmp_path: Path, judge_server) -> None:
    pairs_file(tmp_path, [True])
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "eth", "--yes", server=judge_server)
    assert code == 2 and "each row holds two answers (answer_a, answer_b) and the rubric grades one" in flat(out)
    code, out = judgebot(tmp_path, "judge", "--rubric", "pairwise", "-q", "q", "-r", "r", "-a", "a")
    assert code == 2 and "pairwise compares two answers to each question: give a CSV file" in flat(out)
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "eth", "--no-swap")
    assert code == 2 and "--no-swap is for a pairwise rubric" in flat(out)
    write_rows(tmp_path / "one.csv", ["question", "reference", "answer"], [["q", "r", "a"]])
    code, out = judgebot(tmp_path, "judge", "one.csv", "--rubric", "pairwise", "--yes", server=judge_server)
    assert code == 2 and "no answer_a or answer_b column" in flat(out)
    assert judge_server.bodies() == []


@pytest.mark.slow
def test_a_kill_mid_run_loses_no_pair_and_judges_no_order_twice(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    judge_server.latency = 0.05
    pairs_file(tmp_path, [True, False] * 20)

    kill_when(tmp_path, ["judge", "pairs.csv", "--rubric", "pairwise", "--yes", "--concurrency", "4"],
              lambda: count(tmp_path, "SELECT COUNT(*) FROM judgment WHERE status = 'scored'") >= 12,
              server=judge_server, what="12 judgments saved")
    saved = count(tmp_path, "SELECT COUNT(*) FROM judgment WHERE status = 'scored'")
    asked = len(judge.seen)
    code, out = judgebot(tmp_path, "resume", "--yes", server=judge_server)

    assert code == 0, out
    assert count(tmp_path, "SELECT COUNT(*) FROM judgment WHERE status = 'scored'") == 80
    resumed = judge.seen[asked:]
    assert len(resumed) == 80 - saved  # the saved orders were not asked again; the rest once each
    assert len(set(resumed)) == len(resumed)
    _, rows = read_results(tmp_path / "pairs.results.csv")
    assert [row["winner"] for row in rows] == ["B", "A"] * 20


def test_the_same_file_judged_again_reuses_every_order_from_the_cache(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    pairs_file(tmp_path, [True, False, None])
    assert judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)[0] == 0
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", "--out", "again.csv",
                         server=judge_server)
    assert code == 0, out
    assert len(judge.seen) == 6 and "reused from cache 6 judgments" in flat(out)
    _, rows = read_results(tmp_path / "again.csv")
    assert [row["winner"] for row in rows] == ["B", "A", "tie"] and {row["cached"] for row in rows} == {"true"}


def test_samples_of_a_pairwise_judge_are_taken_per_order(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    pairs_file(tmp_path, [True, False])
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--samples", "3", "--yes",
                         server=judge_server)
    assert code == 0, out
    assert len(judge.seen) == 12  # 2 pairs x 2 orders x 3 samples
    _, rows = read_results(tmp_path / "pairs.results.csv")
    assert [row["winner"] for row in rows] == ["B", "A"]


def test_compare_asks_a_pairwise_judge_about_two_models_answers(tmp_path: Path, judge_server) -> None:
    from tests.support.scripted_judge import Script

    plan = {f"v1 says q{n}": ["Correct"] for n in range(4)} | {f"v2 says q{n}": ["Correct"] for n in range(4)}
    judge_server.responder = Script({"judge-cli": plan})
    rows = [[f"q{n}", "Use myStudies.", f"v1 says q{n}", "bot-v1"] for n in range(4)]
    rows += [[f"q{n}", "Use myStudies.", f"v2 says q{n}" + (f" {MARK}" if n else ""), "bot-v2"] for n in range(4)]
    plan |= {f"v2 says q{n} {MARK}": ["Correct"] for n in range(1, 4)}
    write_rows(tmp_path / "graded.csv", ["question", "reference", "answer", "model"], rows)
    assert judgebot(tmp_path, "judge", "graded.csv", "--rubric", "eth", server=judge_server)[0] == 0
    judge = PrefersMarked()
    judge_server.responder = judge

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--judge", "pairwise",
                         "--yes", server=judge_server)

    text = flat(out)
    assert code == 0, out
    assert "bot-v2 against bot-v1, rubric eth: 4 questions with a score on both sides" in text  # the free comparison first
    assert "paired difference +0.0" in text  # the eth judge gave both Correct everywhere...
    assert len(judge.seen) == 8  # ... the pairwise judge sees that v2 is better on 3 of 4, in both orders
    assert "bot-v2 over bot-v1: 88%" in text and "won 3, lost 0, tied 1" in text
    _, results = read_results(tmp_path / "compare.results.csv")
    assert [row["winner"] for row in results] == ["tie", "B", "B", "B"]
    assert {(row["model_a"], row["model_b"]) for row in results} == {("bot-v1", "bot-v2")}

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--judge", "eth")
    assert code == 2 and "--judge takes a pairwise rubric" in flat(out)
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--no-swap")
    assert code == 2 and "are for --judge RUBRIC" in flat(out)


def test_the_digest_of_a_week_of_pairwise_runs_shows_their_win_rates(tmp_path: Path, judge_server, slack_server) -> None:
    import sqlite3

    judge_server.responder = PrefersMarked()
    pairs_file(tmp_path, [True, True, True, False])
    assert judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server)[0] == 0
    db = sqlite3.connect(tmp_path / "h.db")  # as if judged in channel C0GENERAL on Wednesday of W46
    with db:
        db.execute("UPDATE judgment SET channel_id = '#calibration-check C0GENERAL', "
                   "judged_at = '2026-11-11 12:00:00.000000'")
    db.close()

    code, found, stderr = judgebot_json(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46")
    assert code == 0 and found["figures"] == [], stderr  # only pairs were judged that week
    [match] = found["pairwise"]
    assert (match["a"], match["b"], match["win_rate"]) == ("bot-v1", "bot-v2", 0.75)
    assert (match["pairs"], match["b_won_pairs"], match["a_won_pairs"], match["tied_pairs"]) == (4, 3, 1, 0)
    # 3 of 4 won: Wilson's interval, statsmodels' proportion_confint(3, 4, method="wilson") = (0.3006, 0.9544)
    assert match["interval"] == pytest.approx([0.3006, 0.9544], abs=1e-4)
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46")
    text = flat(out)
    assert code == 0 and "no judgments" not in text, out  # the digest is not quiet
    assert ("Pairwise win rates (each pair judged in both orders, ties split): bot-v2 over bot-v1: 75% (95% CI "
            "30%-95%) of 4 pairs; won 3, lost 1, tied 0") in text
    code, found, _ = judgebot_json(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W45")
    assert code == 0 and (found["cases"], found["figures"], found["pairwise"]) == (0, [], [])

    slack = {"SLACK_BOT_TOKEN": slack_server.bot_token, "SLACK_API_URL": slack_server.api_url}
    code, out = judgebot(tmp_path, "digest", "--channel", "C0GENERAL", "--week", "2026-W46", "--post", **slack)
    assert code == 0, out
    [posted] = slack_server.calls_to("chat.postMessage")
    blocks = str(posted.params["blocks"])
    assert "*Pairwise win rates these 7 days*" in blocks and "bot-v2 over bot-v1: 75%" in blocks
    assert slack_server.uploads("C0GENERAL") == []  # no scores, no trend chart


def test_pairs_count_against_the_monthly_budget_and_a_jury_judges_each_order(tmp_path: Path, judge_server) -> None:
    judge = PrefersMarked()
    judge_server.responder = judge
    pairs_file(tmp_path, [True, False, True])
    priced = {"JUDGE_MODEL": "gpt-4o-mini", "JUDGE_MONTHLY_BUDGET": "1"}
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--yes", server=judge_server,
                         **priced)
    assert code == 0, out
    [(cost,)] = history(tmp_path, "SELECT sum(cost) FROM billed_tally WHERE channel_key = '#calibration-check'")
    assert cost > 0
    code, budget, stderr = judgebot_json(tmp_path, "budget", **priced)
    assert code == 0 and budget["spent_usd"] == pytest.approx(cost), stderr
    assert budget["checks"]["usd"] == pytest.approx(cost) and budget["runs"]["by_judge"] == []  # pairs are checks
    assert (budget["monthly_budget_usd"], budget["left_usd"]) == (1.0, pytest.approx(1 - cost))
    code, out = judgebot(tmp_path, "budget", **priced)  # as a person reads it
    assert f"This month the terminal's judging spent ${cost:.4f} of JUDGE_MONTHLY_BUDGET" in flat(out)
    assert f"Of it, ${cost:.4f} on calibration checks, judge comparisons, alignments and pairwise runs" in flat(out)
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--fresh", "--out", "again.csv",
                         server=judge_server, JUDGE_MODEL="gpt-4o-mini", JUDGE_MONTHLY_BUDGET=f"{cost * 1.5:.6f}")
    assert code == 2 and "would go over the budget" in flat(out), out

    asked = len(judge.seen)
    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--judges", "judge-a,judge-b",
                         "--out", "jury.csv", "--yes", server=judge_server)
    assert code == 0, out
    assert len(judge.seen) - asked == 12  # 3 pairs x 2 orders x 2 judges
    header, rows = read_results(tmp_path / "jury.csv")
    assert [row["winner"] for row in rows] == ["B", "A", "B"]
