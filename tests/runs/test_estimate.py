"""Prices and estimates: the price table (exact names, dated snapshots, settings' additions), the estimate against real
o200k token counts of the seed rubrics' requests, the reply size learned from the history, and the terminal's
questions above CONFIRM_ABOVE_USD and over JUDGE_MONTHLY_BUDGET, against the local judge server."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bot.csvfiles.rows import CsvRow
from bot.errors import SetupError
from bot.judge.panel import Panel
from bot.llm.prices import Price, builtin_prices, load_prices
from bot.records import Triple
from bot.runs import execute_run, start_run
from bot.runs.estimate import FROM_SCHEMA, estimate_rows, schema_reply_tokens
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of

COUNTS = json.loads((Path(__file__).parents[1] / "data" / "o200k_counts.json").read_text(encoding="utf-8"))
CHAT_OVERHEAD = 2 * 3 + 3  # OpenAI's count for a chat request: 3 tokens a message, 3 to prime the reply
TOLERANCE = 0.15


def real_tokens(case: dict) -> int:
    """The prompt tokens a request of the case is billed, by the o200k tokenizer (bench/token_counts.py)."""
    return case["content_tokens"] + CHAT_OVERHEAD


def test_prices_match_exact_names_and_dated_snapshots_never_a_prefix() -> None:
    table = builtin_prices()
    assert table.price_of("gpt-4o-2024-08-06") == table.price_of("gpt-4o") == Price(input=2.5, cached_input=1.25,
                                                                                      output=10, context=128_000)
    assert table.price_of("GPT-4o-mini-2024-07-18") == Price(input=0.15, cached_input=0.075, output=0.6, context=128_000)
    assert table.price_of("openai/gpt-4.1") == table.price_of("gpt-4.1")  # a router's name for it
    assert table.price_of("gpt-5-pro") == Price(input=15, output=120, context=400_000)  # not gpt-5's price
    assert table.price_of("o3") is not None and table.price_of("o3-mini") != table.price_of("o3")
    for unknown in ("gpt-5.4-nano", "gpt-5-turbo", "llama3:70b", "gpt-4o-mini-tts", ""):
        assert table.price_of(unknown) is None, unknown
    assert table.cost("llama3:70b", 0, 0) == 0.0  # nothing used, nothing owed, whatever the price
    assert table.cost("llama3:70b", 10, 1) is None
    # 1,000 in of which 400 cached, 200 out on gpt-4o: (600 x 2.50 + 400 x 1.25 + 200 x 10) / 1e6
    assert table.cost("gpt-4o", 1_000, 200, 400) == pytest.approx(0.004)
    assert table.cost("gpt-4o", 1_000, 200, 400, batch=True) == pytest.approx(0.002)
    # a model without a cached rate bills cached input at the full rate
    assert table.cost("gpt-5-pro", 1_000, 0, 1_000) == pytest.approx(0.015)


def test_judge_prices_add_and_override_and_a_broken_file_is_named(tmp_path: Path) -> None:
    extra = tmp_path / "prices.yaml"
    extra.write_text("models:\n  llama3:70b: {input: 0.6, output: 0.8}\n  GPT-4o: {input: 2.0, output: 8.0}\n")
    table = load_prices(extra)
    assert table.price_of("llama3:70b") == Price(input=0.6, output=0.8, source="JUDGE_PRICES (prices.yaml)")
    # an override's prices replace the shipped ones whole (no cached rate kept); the context window stays
    overridden = table.price_of("gpt-4o-2024-08-06")
    assert overridden is not None and (overridden.input, overridden.output, overridden.cached_input, overridden.context,
                                       overridden.source) == (2.0, 8.0, None, 128000, "JUDGE_PRICES (prices.yaml)")
    assert table.as_of == builtin_prices().as_of and builtin_prices().price_of("llama3:70b") is None
    broken = tmp_path / "broken.yaml"
    broken.write_text("models:\n  mine: {input: -1, output: cheap}\n")
    with pytest.raises(SetupError) as caught:
        load_prices(broken)
    assert f"JUDGE_PRICES: {broken} must list `models:`" in str(caught.value) and "models.mine.input" in str(caught.value)
    with pytest.raises(SetupError, match="cannot read"):
        load_prices(tmp_path / "missing.yaml")


@pytest.mark.parametrize("rubric_name", ["academic", "eth", "benchmark"])
def test_the_estimate_is_within_15_percent_of_real_token_counts(rubrics, rubric_name: str) -> None:
    rubric = rubrics.get(rubric_name)
    cases = [case for case in COUNTS["cases"] if case["rubric"] == rubric_name]
    assert len(cases) == 10  # five languages, a short and a long answer each
    for case in cases:
        triple = Triple(question=case["question"], reference=case["reference"], answer=case["answer"])
        estimate = estimate_rows(rubric, [triple], judges=["gpt-4o"], samples=1, prices=builtin_prices())
        assert abs(estimate.tokens_in / real_tokens(case) - 1) <= TOLERANCE, (case["language"], case["length"],
                                                                              estimate.tokens_in, real_tokens(case))
    # and over the whole file, with a jury of two judges asked twice each
    triples = [Triple(question=c["question"], reference=c["reference"], answer=c["answer"]) for c in cases]
    whole = estimate_rows(rubric, triples, judges=["gpt-4o", "gpt-4o-mini"], samples=2, prices=builtin_prices())
    real = 4 * sum(real_tokens(case) for case in cases)
    assert abs(whole.tokens_in / real - 1) <= TOLERANCE / 2
    assert whole.tokens_out == 40 * schema_reply_tokens(rubric)  # 10 rows x 2 judges x 2 samples
    per_judge = (whole.tokens_in / 2, whole.tokens_out / 2)
    expected = sum(builtin_prices().cost(model, math.ceil(per_judge[0]), math.ceil(per_judge[1])) or 0
                   for model in ("gpt-4o", "gpt-4o-mini"))
    assert whole.cost_usd == pytest.approx(expected, rel=1e-3)
    assert "for 10 rows x 2 samples with gpt-4o + gpt-4o-mini" in whole.text()


async def test_the_reply_size_is_learned_from_the_rubrics_recent_replies(store, rubrics, judge_server,
                                                                         make_client) -> None:
    eth = rubrics.get("eth")
    triples = [Triple(question="Exams?", reference="Register in myStudies.", answer=f"answer {n}") for n in range(4)]
    before = estimate_rows(eth, triples, judges=["judge-test"], samples=1, prices=builtin_prices(), store=store)
    assert before.reply_basis == FROM_SCHEMA and before.tokens_out == 4 * schema_reply_tokens(eth)
    assert before.cost_usd is None and before.unpriced == ["judge-test"]
    assert "price unknown for judge-test (JUDGE_PRICES can add it)" in before.text()

    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_out=90)
    panel = Panel([make_client(temperature=0.7)], samples=2)
    rows = [CsvRow(line=n + 2, question=t.question, reference=t.reference, answer=t.answer, model=None,
                   cells={"answer": t.answer}) for n, t in enumerate(triples)]
    run = start_run(store, rubric=eth, rows=rows, columns=["answer"], **panel.run_fields())
    await execute_run(store, run, eth, panel, concurrency=4)

    after = estimate_rows(eth, triples, judges=["judge-test"], samples=1, prices=builtin_prices(), store=store)
    assert after.reply_basis == "the last 4 replies of eth"  # 2 samples of 90 tokens each: 90 a judgment
    assert after.tokens_out == 4 * 90


def fixture_rows(rubric: str) -> list[list[str]]:
    return [[case["question"], case["reference"], case["answer"], case["language"]]
            for case in COUNTS["cases"] if case["rubric"] == rubric]


def billed_like_openai(body: dict) -> Reply:
    """An eth verdict billed with the request's real o200k prompt tokens."""
    _, _, answer = triple_of(body)
    case = next(c for c in COUNTS["cases"] if c["rubric"] == "eth" and c["answer"] == answer)
    return Reply(content=eth_reply("Correct").content, tokens_in=real_tokens(case), tokens_out=120)


def test_a_run_above_the_threshold_asks_and_its_summary_puts_the_estimate_beside_the_bill(tmp_path, judge_server) -> None:
    judge_server.responder = billed_like_openai
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer", "model"], fixture_rows("eth"))
    command = ["judge", "rows.csv", "--rubric", "eth"]

    code, out = judgebot(tmp_path, *command, server=judge_server, JUDGE_MODEL="gpt-4o", CONFIRM_ABOVE_USD="0.001")

    text = flat(out)
    assert code == 2, out
    estimated = history(tmp_path, "SELECT estimate FROM run WHERE id = 1")[0][0]
    saved = json.loads(estimated)
    assert saved["rows"] == 10 and saved["samples"] == 1 and saved["cost_usd"] > 0.001
    assert f"about ${saved['cost_usd']:.4f} is more than CONFIRM_ABOVE_USD ($0.0010), and there is no terminal to ask; " \
           "pass --yes to judge it anyway" in text
    assert f"Estimate: about ${saved['cost_usd']:.4f} for 10 rows with gpt-4o ({saved['tokens_in']:,} tokens in" in text
    assert "replies sized from the rubric's reply schema" in text
    assert judge_server.bodies() == []
    assert history(tmp_path, "SELECT status, stop_reason FROM run") == [
        ("cancelled", "not started: its cost was not agreed to")]

    code, out = judgebot(tmp_path, *command, "--yes", server=judge_server, JUDGE_MODEL="gpt-4o",
                         CONFIRM_ABOVE_USD="0.001")

    text = flat(out)
    assert code == 0, out
    assert len(judge_server.bodies()) == 10
    (estimate,), = history(tmp_path, "SELECT estimate FROM run WHERE id = 2")
    guess = json.loads(estimate)
    billed_in = sum(real_tokens(c) for c in COUNTS["cases"] if c["rubric"] == "eth")
    assert abs(guess["tokens_in"] / billed_in - 1) <= TOLERANCE  # the estimate against what the server counted
    cost = builtin_prices().cost("gpt-4o", billed_in, 1_200)
    assert f"cost ${cost:.4f}" in text
    assert (f"estimate estimated ${guess['cost_usd']:.4f} ({guess['tokens_in']:,} tokens in, {guess['tokens_out']:,} "
            f"out; the run took {billed_in / guess['tokens_in']:.0%} and {1_200 / guess['tokens_out']:.0%} of that)") in text
    assert history(tmp_path, "SELECT round(sum(cost_usd), 6) FROM judgment WHERE run_id = 2") == [(round(cost, 6),)]
    assert history(tmp_path, "SELECT round(sum(cost), 6), sum(unpriced) FROM judgment_tally") == [(round(cost, 6), 0)]


@pytest.mark.slow
def test_the_monthly_budget_asks_before_going_over_and_pauses_a_run_that_reaches_it(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    write_rows(tmp_path / "first.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                             for n in range(4)])
    write_rows(tmp_path / "more.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"b{n}"]
                                                                            for n in range(40)])
    each = builtin_prices().cost("gpt-4o", 1_000, 100)  # $0.0035 a row
    assert each is not None
    money = {"JUDGE_MODEL": "gpt-4o", "JUDGE_MONTHLY_BUDGET": f"{each * 10:.6f}", "CONCURRENCY": "1"}

    code, out = judgebot(tmp_path, "judge", "first.csv", "--rubric", "eth", server=judge_server, **money)
    assert code == 0, out  # 4 rows: within the budget of 10 rows' worth

    # 40 more rows would take the month over: asked first, refused without a terminal
    code, out = judgebot(tmp_path, "judge", "more.csv", "--rubric", "eth", server=judge_server, **money)
    text = flat(out)
    assert code == 2 and len(judge_server.bodies()) == 4, out
    assert (f"would go over the budget: this month's spend is ${4 * each:.4f} of JUDGE_MONTHLY_BUDGET "
            f"(${10 * each:.4f}), and there is no terminal to ask; pass --yes") in text

    # An estimate that fits but a bill that does not: the run pauses where the budget is reached
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=4_000, tokens_out=100)
    write_rows(tmp_path / "few.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"c{n}"]
                                                                          for n in range(5)])
    code, out = judgebot(tmp_path, "judge", "few.csv", "--rubric", "eth", server=judge_server, **money)
    text = flat(out)
    assert code == 1, out
    dear = builtin_prices().cost("gpt-4o", 4_000, 100) or 0
    judged = math.ceil((6 * each) / dear)  # rows until the $0.021 left is spent: 0.0110 a row, so 2
    assert len(judge_server.bodies()) == 4 + judged
    assert f"the monthly budget is reached: this run spent ${judged * dear:.4f} of the ${6 * each:.4f} left this " \
           "month. Raise JUDGE_MONTHLY_BUDGET, then resume" in text
    assert history(tmp_path, "SELECT status, count(*) FROM judgment WHERE run_id = 3 GROUP BY status") == [
        ("pending", 5 - judged), ("scored", judged)]

    # Resuming over the budget asks again; --yes finishes the run without a pause
    code, out = judgebot(tmp_path, "resume", "3", server=judge_server, **money)
    assert code == 2 and "would go over the budget" in flat(out), out
    code, out = judgebot(tmp_path, "resume", "3", "--yes", server=judge_server, **money)
    assert code == 0 and len(judge_server.bodies()) == 4 + 5, out


def test_cached_prompt_tokens_are_recorded_and_billed_at_the_cached_rate(tmp_path, judge_server) -> None:
    # the provider served 1,536 of 2,000 prompt tokens from its cache: gpt-4o bills them at $1.25, not $2.50
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=2_000, tokens_out=100,
                                                cached_tokens=1_536)
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "a"],
                                                                            ["Exams?", "myStudies.", "b"]])

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="gpt-4o")

    assert code == 0, out
    each = (464 * 2.50 + 1_536 * 1.25 + 100 * 10.00) / 1_000_000
    assert history(tmp_path, "SELECT tokens_in, tokens_cached, round(cost_usd, 8) FROM judgment ORDER BY id") == [
        (2_000, 1_536, round(each, 8))] * 2
    text = flat(out)
    assert "4,000 in (3,072 of them cached) · 200 out" in text and f"cost ${2 * each:.4f}" in text


def test_a_reply_cut_off_at_its_token_limit_names_the_setting_to_raise(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content='{"correctness": 2, "compl', finish_reason="length")
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "a"]])

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server)

    assert code == 1, out
    (error,), = history(tmp_path, "SELECT error FROM judgment")
    assert "cut off at its token limit" in error and "raise JUDGE_MAX_COMPLETION_TOKENS" in error


@pytest.mark.slow
def test_one_triple_and_a_calibration_check_are_held_to_the_budget_and_the_threshold(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    write_rows(tmp_path / "labeled.csv", ["question", "reference", "answer", "human_pass"],
               [["Exams?", "myStudies.", f"a{n}", "yes"] for n in range(4)])
    each = builtin_prices().cost("gpt-4o", 1_000, 100)
    assert each is not None
    money = {"JUDGE_MODEL": "gpt-4o", "JUDGE_MONTHLY_BUDGET": f"{each * 4.2:.6f}"}
    code, out = judgebot(tmp_path, "judge", "labeled.csv", "--rubric", "eth", server=judge_server, **money)
    assert code == 0 and len(judge_server.bodies()) == 4, out  # what is left of the month's budget is too little now
    triple = ["judge", "--rubric", "eth", "-q", "Exams?", "-r", "myStudies.", "-a", "In myStudies."]

    code, out = judgebot(tmp_path, *triple, server=judge_server, **money)
    text = flat(out)
    assert code == 2 and len(judge_server.bodies()) == 4, out  # nothing sent past a budget already spent
    assert "would go over the budget: this month's spend is" in text and "pass --yes" in text
    code, out = judgebot(tmp_path, *triple, "--yes", server=judge_server, **money)
    assert code == 0 and len(judge_server.bodies()) == 5 and "PASS" in out, out
    code, out = judgebot(tmp_path, *triple[:-1], "In ASVZ.", server=judge_server, JUDGE_MODEL="gpt-4o")
    assert code == 0 and "Estimate" not in out, out  # under the threshold and without a budget: not a word of cost

    check = ["calibration", "check", "--rubric", "eth", "--labels", "labeled.csv", "--fresh", "--min-labels", "0",
             "--point"]
    code, out = judgebot(tmp_path, *check, server=judge_server, **money)
    assert code == 2 and len(judge_server.bodies()) == 6 and "would go over the budget" in flat(out), out
    code, out = judgebot(tmp_path, *check, server=judge_server, JUDGE_MODEL="gpt-4o", CONFIRM_ABOVE_USD="0.001")
    text = flat(out)
    assert code == 2 and len(judge_server.bodies()) == 6, out
    assert "is more than CONFIRM_ABOVE_USD ($0.0010), and there is no terminal to ask; pass --yes" in text
    code, out = judgebot(tmp_path, *check, "--yes", server=judge_server, JUDGE_MODEL="gpt-4o", CONFIRM_ABOVE_USD="0.001")
    assert code == 0 and len(judge_server.bodies()) == 10, out


def test_a_budget_reached_by_the_last_row_ends_the_run_done(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                          for n in range(2)])
    each = builtin_prices().cost("gpt-4o", 1_000, 100)
    assert each is not None
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", "--concurrency", "1",
                         server=judge_server, JUDGE_MODEL="gpt-4o", JUDGE_MONTHLY_BUDGET=f"{each * 2:.8f}")
    assert code == 0 and "stopped" not in out, out
    assert history(tmp_path, "SELECT status, stop_reason FROM run") == [("done", None)]


def test_many_requests_to_a_judge_of_unknown_price_ask_first(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: eth_reply("Correct")
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                          for n in range(4)])
    command = ["judge", "rows.csv", "--rubric", "eth", "--samples", "3"]  # 12 requests to judge-cli, price unknown
    code, out = judgebot(tmp_path, *command, server=judge_server, CONFIRM_ABOVE_REQUESTS="10")
    text = flat(out)
    assert code == 2 and judge_server.bodies() == [], out
    assert ("12 requests to judges of unknown price (judge-cli) is more than CONFIRM_ABOVE_REQUESTS (10), and there is "
            "no terminal to ask; pass --yes") in text
    code, out = judgebot(tmp_path, *command, server=judge_server, CONFIRM_ABOVE_REQUESTS="12")
    assert code == 0 and len(judge_server.bodies()) == 12, out


def test_a_jury_with_a_judge_of_unknown_price_counts_the_priced_part() -> None:
    from bot.records import Triple
    from bot.rubric import load_rubrics

    eth = load_rubrics().get("eth")
    triples = [Triple(question="Exams?", reference="myStudies.", answer=f"a{n}") for n in range(10)]
    alone = estimate_rows(eth, triples, judges=["gpt-4o"], samples=1, prices=builtin_prices())
    jury = estimate_rows(eth, triples, judges=["gpt-4o", "local-model"], samples=1, prices=builtin_prices())
    assert alone.cost_usd is not None and jury.cost_usd == alone.cost_usd and jury.unpriced == ["local-model"]
    assert jury.unpriced_requests == 10 and jury.requests == 20
    assert jury.cost_text() == (f"about ${alone.cost_usd:.4f} for the judges of known price; price unknown for "
                                "local-model (JUDGE_PRICES can add it)")


def test_a_jury_with_a_judge_of_unknown_price_still_pauses_at_the_budget(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=4_000, tokens_out=100)
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                          for n in range(10)])
    dear = builtin_prices().cost("gpt-4o", 4_000, 100)
    assert dear is not None
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--concurrency", "1", server=judge_server,
                         JUDGES="gpt-4o,local-model", JUDGE_MONTHLY_BUDGET="0.05")
    text = flat(out)
    assert code == 1 and "the monthly budget is reached" in text, out
    gpt4o = history(tmp_path, "SELECT sum(judgments), round(sum(cost), 6) FROM billed_tally WHERE judge_model = 'gpt-4o'")
    [(samples, cost)] = gpt4o
    assert samples == math.ceil(0.05 / dear) and cost == round(samples * dear, 6)  # paused where gpt-4o's part reached it
    assert history(tmp_path, "SELECT sum(unpriced) FROM billed_tally WHERE judge_model = 'local-model'")[0][0] >= 1


def test_the_estimate_counts_what_will_be_sent(tmp_path, judge_server) -> None:
    def responder(body: dict) -> Reply:  # the answer "b" is generic; so the judge fails what people fail below
        tag = "Generic" if triple_of(body)[2] == "b" else "Correct"
        return Reply(content=eth_reply(tag).content, tokens_in=1_000, tokens_out=100)

    judge_server.responder = responder
    write_rows(tmp_path / "same.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "Same."]] * 100)
    money = {"JUDGE_MODEL": "gpt-4o", "CONFIRM_ABOVE_USD": "0.01"}
    code, out = judgebot(tmp_path, "judge", "same.csv", "--rubric", "eth", server=judge_server, **money)
    text = flat(out)
    assert code == 0 and len(judge_server.bodies()) == 1, out  # 100 identical rows: one request, under the threshold
    assert "Estimate: about $0.00" in text and "for 1 row with gpt-4o" in text
    assert "99 more rows reused from the history or sent once for identical texts" in text

    # The same file again: every verdict is in the history, nothing is sent and nothing is asked.
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                          for n in range(6)])
    assert judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--yes", server=judge_server, **money)[0] == 0
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server, **money)
    text = flat(out)
    assert code == 0 and len(judge_server.bodies()) == 7, out
    assert "about $0.0000 for 0 rows with gpt-4o (0 tokens in, 0 out, 6 more rows reused from the history" in text

    # A calibration check estimates the rows it sends: those judged already by today's judge are reused.
    write_rows(tmp_path / "labels.csv", ["question", "reference", "answer", "human_pass"],
               [["Exams?", "myStudies.", f"a{n}", "yes"] for n in range(6)] + [["Exams?", "myStudies.", "b", "no"]])
    code, out = judgebot(tmp_path, "calibration", "check", "--rubric", "eth", "--labels", "labels.csv",
                         "--min-labels", "0", "--point", server=judge_server, **money)
    text = flat(out)
    assert code == 0 and len(judge_server.bodies()) == 8, out
    assert "Judging the labeled rows again: about $0.00" in text and "for 1 row with gpt-4o" in text
    assert "6 more rows reused" in text


def test_the_terminals_spend_against_its_budget(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", f"a{n}"]
                                                                          for n in range(4)])
    assert judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="gpt-4o")[0] == 0
    each = builtin_prices().cost("gpt-4o", 1_000, 100)
    assert each is not None
    code, out = judgebot(tmp_path, "budget", JUDGE_MONTHLY_BUDGET="1")
    text = flat(out)
    assert code == 0, out
    assert (f"This month the terminal's judging spent ${4 * each:.4f} of JUDGE_MONTHLY_BUDGET ($1.00: "
            f"${1 - 4 * each:.4f} left)") in text
    assert f"eth · gpt-4o ${4 * each:.4f}" in text and "CONFIRM_ABOVE_USD" in text
    code, out = judgebot(tmp_path, "budget")
    assert code == 0 and "(no JUDGE_MONTHLY_BUDGET set)" in flat(out)


def test_a_run_refused_before_it_started_is_not_listed(tmp_path, judge_server) -> None:
    judge_server.responder = lambda body: eth_reply("Correct")
    write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"], [["Exams?", "myStudies.", "a"]])
    code, _ = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server, JUDGE_MODEL="gpt-4o",
                       CONFIRM_ABOVE_USD="0")
    assert code == 2
    assert judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", server=judge_server)[0] == 0
    code, out = judgebot(tmp_path, "runs")
    ids = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert code == 0 and ids == ["2"] and "cancelled" not in out, out


def test_the_estimate_counts_the_retrieved_passages_of_each_row(store, make_client) -> None:
    from bot.llm.tokens import text_tokens
    from bot.rubric import Rubric
    from bot.runs.estimate import estimate_run
    from tests.support.rubric_files import grounded

    rubric = Rubric.model_validate(grounded())
    passage = " ".join(["retrieved"] * 1_000)  # two of them: about 2,000 tokens of context a row
    assert 1_900 <= 2 * text_tokens(passage) <= 2_100
    panel = Panel([make_client()])
    found = []
    for context in (None, [passage, passage]):
        rows = [CsvRow(line=n + 2, question=f"When does the Mensa open, {n}?", reference="At 11.", answer="At 11.",
                       model=None, cells={}, context=context) for n in range(10)]
        run = start_run(store, rubric=rubric, rows=rows, columns=["question"], **panel.run_fields())
        found.append(estimate_run(store, run, rubric, panel))
    plain, with_context = found
    assert with_context.rows == plain.rows == 10
    assert with_context.tokens_in - plain.tokens_in == pytest.approx(10 * 2 * text_tokens(passage), abs=10 * 20)
    assert with_context.tokens_out == plain.tokens_out


async def test_the_rows_keys_the_estimate_works_out_are_taken_by_the_judging_that_follows(store, rubrics, judge_server,
                                                                                       make_client) -> None:
    from bot.runs.estimate import estimate_run
    from bot.runs.job import KEYS_KEPT, RowKeys, RunJob
    from bot.store import iter_judgments

    eth = rubrics.get("eth")
    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content)
    panel = Panel([make_client()])
    rows = [CsvRow(line=n + 2, question=f"Exams {n % 3}?", reference="Register in myStudies.", answer="In myStudies.",
                   model=None, cells={}) for n in range(5)]  # three texts, two of them twice
    run = start_run(store, rubric=eth, rows=rows, columns=["question"], **panel.run_fields())
    keys = RowKeys()
    estimate = estimate_run(store, run, eth, panel, keys=keys)
    saved = list(iter_judgments(store, run.id))
    job = RunJob(store, run, eth, panel)
    assert (estimate.rows, estimate.reused) == (3, 2)  # the twins are not sent twice
    assert keys.kept == {row.id: job.row_key(triple_of_row(row)) for row in saved}

    await execute_run(store, run, eth, panel, concurrency=2, keys=keys)
    assert keys.kept == {}  # each taken once, by the row it was worked out for
    judged = list(iter_judgments(store, run.id))
    assert [row.cache_key for row in judged] == [job.row_key(triple_of_row(row)) for row in judged]
    assert sum(row.cached_from is not None for row in judged) == 2 and len(judge_server.bodies()) == 3

    kept = RowKeys()
    for number in range(KEYS_KEPT + 5):  # a run of any size hands on no more than KEYS_KEPT
        kept.keep(number, "k")
    assert len(kept.kept) == KEYS_KEPT and kept.take(0) == "k" and kept.take(0) is None and kept.take(KEYS_KEPT) is None


def triple_of_row(row) -> Triple:
    return Triple(question=row.question, reference=row.reference, answer=row.answer)
