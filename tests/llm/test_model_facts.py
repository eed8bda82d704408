"""The facts of judge models known before the first request (bot/llm/prices.yaml): each current OpenAI model with its
source and the day it was read, the long-prompt rate priced per request, the reasoning efforts a model accepts and the
temperature it refuses while reasoning, JUDGE_PRICES over them, and an estimate that counts reasoning tokens (from the
judge's history under the rubric, else from its effort)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from bot.csvfiles.rows import CsvRow
from bot.errors import SetupError
from bot.judge.judgment import judge
from bot.judge.panel import Panel
from bot.llm.prices import builtin_prices, load_prices
from bot.llm.sampling import JUDGING_EFFORT, REASONING_PRIOR
from bot.records import Triple
from bot.runs import execute_run, start_run
from bot.runs.estimate import estimate_rows
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply

TRIPLE = Triple(question="Where do I see my grades?", reference="In myStudies.", answer="In myStudies.")
CURRENT = ("gpt-6-luna", "gpt-6.1-terra", "gpt-6.2-sol", "gpt-6.2-astra", "gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra",
           "gpt-5.6-luna", "gpt-5.4")


@pytest.mark.parametrize("model", CURRENT)
def test_each_current_openai_model_is_listed_with_its_source_and_the_day_it_was_read(model) -> None:
    price = builtin_prices().price_of(model)
    assert price is not None and price.source and "developers.openai.com" in price.source
    assert price.read == date(2026, 12, 7) and price.context == 1_050_000
    assert price.long_prompt is not None and (price.long_prompt.above, price.long_prompt.input,
                                              price.long_prompt.output) == (272_000, 2.0, 1.5)
    assert price.efforts and JUDGING_EFFORT in price.efforts


def test_gpt_6_as_the_issue_read_it() -> None:
    table = builtin_prices()
    luna = table.price_of("gpt-6-luna")
    assert luna is not None and (luna.input, luna.cached_input, luna.output) == (0.10, 0.01, 0.50)
    assert table.price_of("gpt-6.1-terra").input == 1.00 and table.price_of("gpt-6.1-terra").output == 5.00  # type: ignore[union-attr]
    luna_rules, sol_rules = table.rules_of("gpt-6-luna"), table.rules_of("gpt-6.2-sol")
    assert luna_rules is not None and luna_rules.default == "medium" and "none" in luna_rules.efforts
    assert sol_rules is not None and "none" not in sol_rules.efforts
    assert "none" not in table.rules_of("gpt-6.2-astra").efforts  # type: ignore[union-attr]
    assert table.rules_of("gpt-4o") is None and table.rules_of("llama3:70b") is None  # learned by refusal


def test_a_long_prompt_is_billed_at_its_rate_for_the_whole_request_and_only_that_request() -> None:
    table = builtin_prices()
    # 272,000 input tokens is not over the threshold: luna's plain rate
    assert table.request_cost("gpt-6-luna", 272_000, 1_000) == pytest.approx((272_000 * 0.10 + 1_000 * 0.50) / 1e6)
    # one more: 2x input (cached input too) and 1.5x output, for every token of the request
    assert table.request_cost("gpt-6-luna", 272_001, 1_000, 100_000) == pytest.approx(
        ((172_001 * 0.10 + 100_000 * 0.01) * 2 + 1_000 * 0.50 * 1.5) / 1e6)
    assert table.request_cost("gpt-6-luna", 272_001, 1_000, batch=True) == pytest.approx(
        (272_001 * 0.10 * 2 + 1_000 * 0.50 * 1.5) / 2e6)
    # a model with no such rule: no change
    assert table.request_cost("gpt-4.1", 300_000, 1_000) == table.cost("gpt-4.1", 300_000, 1_000)


async def test_a_judgment_prices_each_request_alone_and_its_reasoning_as_output(rubrics, judge_server,
                                                                                make_client) -> None:
    # The first reply breaks the rubric (repair asked); the first request was a long prompt, the repair not: only
    # the first is billed at the long rate.
    judge_server.enqueue(Reply(content="not json", tokens_in=300_000, tokens_out=500, reasoning_tokens=400),
                         Reply(content=eth_reply("Correct").content, tokens_in=2_000, tokens_out=80,
                               reasoning_tokens=60))
    verdict = await judge(rubrics.get("eth"), TRIPLE, make_client(model="gpt-6-luna"), prices=builtin_prices())
    assert verdict.status == "scored"
    assert (verdict.tokens_in, verdict.tokens_out, verdict.tokens_reasoning) == (302_000, 1_040, 460)
    assert verdict.cost_usd == pytest.approx((300_000 * 0.10 * 2 + 900 * 0.50 * 1.5 + 2_000 * 0.10 + 140 * 0.50) / 1e6)


def test_judge_prices_over_a_listed_model_keep_its_rules(tmp_path: Path) -> None:
    extra = tmp_path / "prices.yaml"
    extra.write_text("models:\n  gpt-6-luna: {input: 0.08, output: 0.40}\n"
                     "  our-reasoner: {input: 1, output: 2, efforts: [low, high], default_effort: high}\n")
    table = load_prices(extra)
    luna = table.price_of("gpt-6-luna")
    assert luna is not None and (luna.input, luna.output, luna.cached_input) == (0.08, 0.40, None)
    assert luna.efforts == builtin_prices().models["gpt-6-luna"].efforts and luna.long_prompt is not None
    assert luna.source == "JUDGE_PRICES (prices.yaml)" and luna.read is None
    assert table.rules_of("our-reasoner").efforts == ("low", "high")  # type: ignore[union-attr]
    broken = tmp_path / "broken.yaml"
    broken.write_text("models:\n  mine: {input: 1, output: 2, efforts: [thorough]}\n")
    with pytest.raises(SetupError, match="models.mine.efforts"):
        load_prices(broken)


def test_a_listed_model_is_sent_only_what_it_accepts(make_client) -> None:
    table = builtin_prices()
    luna = make_client(model="gpt-6-luna", table=table, temperature=0.0)
    assert (luna.reasoning_effort, luna.temperature, luna.effort_in_force) == ("low", None, "low")
    assert "temperature" not in luna.request_body([{"role": "user", "content": "x"}], schema_name="s",
                                                  schema={"type": "object"})
    plain = make_client(model="gpt-6-luna", table=table, temperature=0.0, reasoning_effort="none")
    assert (plain.reasoning_effort, plain.temperature) == ("none", 0.0)
    # a sibling for samples keeps the rules: a reasoning model is never sent the sampling temperature
    assert luna.sibling(temperature=0.7).temperature is None and plain.sibling(temperature=0.7).temperature == 0.7
    gpt54 = make_client(model="gpt-5.4", table=table, temperature=0.0)  # effort none by default, low asked
    assert (gpt54.reasoning_effort, gpt54.temperature) == ("low", None)
    unknown = make_client(model="judge-test", table=table, temperature=0.0)  # nothing known: as before
    assert (unknown.reasoning_effort, unknown.temperature, unknown.effort_in_force) == (None, 0.0, None)
    with pytest.raises(SetupError, match="does not accept reasoning effort 'minimal'"):
        make_client(model="gpt-6-luna", table=table, reasoning_effort="minimal")


async def test_the_estimate_counts_reasoning_from_the_effort_then_from_the_judges_history(store, rubrics, judge_server,
                                                                                          make_client) -> None:
    eth = rubrics.get("eth")
    triples = [Triple(question="Exams?", reference="Register in myStudies.", answer=f"answer {n}") for n in range(4)]
    before = estimate_rows(eth, triples, judges=["gpt-6-luna"], samples=1, prices=builtin_prices(), store=store,
                           efforts=["low"])
    assert before.tokens_reasoning == 4 * REASONING_PRIOR["low"]
    assert before.reasoning_basis == ["a rough prior for gpt-6-luna at effort low"]
    assert "(1,000 of them reasoning)" in before.text()
    plain = estimate_rows(eth, triples, judges=["gpt-6-luna"], samples=1, prices=builtin_prices(), store=store)
    assert plain.tokens_reasoning == 0 and plain.tokens_out == before.tokens_out - 4 * REASONING_PRIOR["low"]
    assert before.cost_usd == pytest.approx(plain.cost_usd + 4 * REASONING_PRIOR["low"] * 0.50 / 1e6)  # type: ignore[operator]

    judge_server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_out=90,
                                                reasoning_tokens=30)
    panel = Panel([make_client(model="gpt-6-luna", table=builtin_prices())], prices=builtin_prices())
    rows = [CsvRow(line=n + 2, question=t.question, reference=t.reference, answer=t.answer, model=None,
                   cells={"answer": t.answer}) for n, t in enumerate(triples)]
    run = start_run(store, rubric=eth, rows=rows, columns=["answer"], **panel.run_fields())
    await execute_run(store, run, eth, panel, concurrency=4)

    after = estimate_rows(eth, triples, judges=["gpt-6-luna"], samples=1, prices=builtin_prices(), store=store,
                          efforts=["low"])
    assert after.reasoning_basis == ["gpt-6-luna's last 4 replies of eth"]
    assert (after.tokens_reasoning, after.tokens_out) == (4 * 30, 4 * (90 + 30))  # the reply sized without it
