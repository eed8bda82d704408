"""`judgebot judge FILE --batch` against a local server that speaks the Batch API: half price, replies validated
like live ones, an expired batch's rows left pending then judged live, a kill -9 while waiting that neither loses
nor repeats a batch, an endpoint without the Batch API, and samples and juries sent as one line per row, judge and
sample."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.llm.prices import builtin_prices
from bot.store import iter_judgments
from tests.support.batch_server import BatchJudgeServer
from tests.support.cli import flat, history, judgebot, read_results, write_rows
from tests.support.kills import count, kill_when
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.scripted_judge import Script

FAST = {"BATCH_POLL_SECONDS": "0.05", "JUDGE_MODEL": "gpt-4o"}
ROWS = 10


@pytest.fixture
def batch_server():
    server = BatchJudgeServer().start()
    server.responder = lambda body: Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)
    yield server
    server.stop()


def rows_file(tmp_path: Path, count: int = ROWS) -> Path:
    return write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
                      [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(count)])


def test_a_file_judged_by_batch_costs_half_and_repairs_an_invalid_reply_live(tmp_path, batch_server) -> None:
    def answer(body: dict) -> Reply:
        if triple_of(body)[2] == "Use myStudies (3)." and len(body["messages"]) == 2:
            return Reply(content='{"correctness": 7}', tokens_in=1_000, tokens_out=10)  # breaks the rubric
        return Reply(content=eth_reply("Correct").content, tokens_in=1_000, tokens_out=100)

    batch_server.responder = answer
    rows_file(tmp_path)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=batch_server, **FAST)

    text = flat(out)
    assert code == 0, out
    assert "through the Batch API" in text  # the estimate at the batch price
    lines = batch_server.batch_requests()
    assert len(lines) == ROWS and len(batch_server.created) == 1
    assert {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert lines[0]["body"]["response_format"]["type"] == "json_schema" and lines[0]["body"]["model"] == "gpt-4o"
    # one live request: the repair of row 3, sent with the batch's own messages and the reply it gave
    live = [body for body in batch_server.bodies() if len(body["messages"]) == 4]
    assert len(live) == 1 and triple_of(live[0])[2] == "Use myStudies (3)."
    _, results = read_results(tmp_path / "rows.results.csv")
    assert {row["status"] for row in results} == {"scored"}
    prices = builtin_prices()
    half = prices.cost("gpt-4o", 1_000, 100, batch=True) or 0
    repaired = (prices.cost("gpt-4o", 1_000, 10, batch=True) or 0) + (prices.cost("gpt-4o", 1_000, 100) or 0)
    assert history(tmp_path, "SELECT round(sum(cost_usd), 8) FROM judgment") == [(round(9 * half + repaired, 8),)]
    assert history(tmp_path, "SELECT state, status, done FROM run_batch") == [("ended", "completed", ROWS)]


def test_an_expired_batch_leaves_its_rows_pending_and_they_are_judged_live(tmp_path, batch_server) -> None:
    batch_server.plan, batch_server.partial = ["in_progress", "expired"], 3
    rows_file(tmp_path)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=batch_server, **FAST)

    text = flat(out)
    assert code == 1, out
    assert "batch batch_1 expired with 7 of its 10 rows not judged: resume the run live, or with --batch" in text
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status ORDER BY 1") == [
        ("pending", 7), ("scored", 3)]

    code, out = judgebot(tmp_path, "resume", "1", "--yes", server=batch_server, **FAST)

    assert code == 0, out
    assert len(batch_server.created) == 1  # judged live, not sent again as a batch
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", ROWS)]


@pytest.mark.slow
def test_a_kill_while_waiting_for_a_batch_neither_loses_nor_repeats_it(tmp_path, batch_server) -> None:
    batch_server.plan = ["in_progress"]  # never ends until the test says so
    rows_file(tmp_path)
    seen_saved: list[bool] = []

    def waited_a_little() -> bool:  # the batch created and its id saved, some 0.2 s ago (a few looks at it)
        seen_saved.append(count(tmp_path, "SELECT count(*) FROM run_batch WHERE batch_id IS NOT NULL") > 0)
        return sum(seen_saved) > 20

    kill_when(tmp_path, ["judge", "rows.csv", "--rubric", "eth", "--batch"], waited_a_little, server=batch_server,
              what="the batch saved", **FAST)
    assert history(tmp_path, "SELECT state, batch_id FROM run_batch") == [("sent", "batch_1")]
    batch_server.batches["batch_1"].steps = ["completed"]

    code, out = judgebot(tmp_path, "resume", server=batch_server, **FAST)

    assert code == 0, out
    assert "has batches sent before: waiting for them" in flat(out)
    assert batch_server.created == ["batch_1"] and len(batch_server.batch_requests()) == ROWS  # nothing sent twice
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", ROWS)]


@pytest.mark.slow
def test_an_endpoint_without_the_batch_api_says_so_and_the_run_goes_on_live(tmp_path, batch_server) -> None:
    batch_server.batch_api = False
    rows_file(tmp_path, 3)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=batch_server, **FAST)

    text = flat(out)
    assert code == 1, out
    assert "the judge endpoint has no Batch API (404 on /v1/batches)" in text and "`judgebot resume 1`" in text
    code, out = judgebot(tmp_path, "resume", "1", server=batch_server, **FAST)
    assert code == 0, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", 3)]

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--samples", "3",
                         server=batch_server, **FAST)
    assert code == 1 and "the judge endpoint has no Batch API" in flat(out) and "`judgebot resume 2`" in flat(out)
    assert batch_server.files == {}  # nothing uploaded


async def test_progress_comes_from_the_batchs_request_counts(tmp_path, batch_server, store, rubrics) -> None:
    from bot.csvfiles.rows import CsvRow
    from bot.llm.configured import make_judge_client
    from bot.runs import Progress, start_run
    from bot.runs.batch import judge_by_batch

    batch_server.plan = ["in_progress", "in_progress", "completed"]
    eth = rubrics.get("eth")
    rows = [CsvRow(line=n + 2, question=f"Exams {n}?", reference="Register in myStudies.", answer=f"Use myStudies ({n}).",
                   model=None, cells={}) for n in range(ROWS)]
    run = start_run(store, rubric=eth, rows=rows, columns=["question"], judge_model="gpt-4o")
    seen: list[Progress] = []
    async with make_judge_client(api_key="k", base_url=batch_server.base_url, model="gpt-4o", timeout=10,
                                 max_retries=0, concurrency=4) as client:
        outcome = await judge_by_batch(store, run, eth, client, prices=builtin_prices(), poll_seconds=0.01,
                                       on_progress=seen.append)
    assert outcome.status == "done"
    # half answered while the batch ran (none saved yet), then every row saved
    assert [(event.done, event.total) for event in seen][:2] == [(ROWS // 2, ROWS), (ROWS // 2, ROWS)]
    assert (seen[-1].done, seen[-1].total) == (ROWS, ROWS)


async def test_a_big_run_is_sent_as_several_batches_under_the_file_limit(batch_server, store, rubrics) -> None:
    from bot.csvfiles.rows import CsvRow
    from bot.llm.configured import make_judge_client
    from bot.runs import start_run
    from bot.runs.batch import judge_by_batch

    eth = rubrics.get("eth")
    rows = [CsvRow(line=n + 2, question=f"Exams {n}?", reference="Register in myStudies.", answer=f"Use myStudies ({n}).",
                   model=None, cells={}) for n in range(ROWS)]
    run = start_run(store, rubric=eth, rows=rows, columns=["question"], judge_model="gpt-4o")
    async with make_judge_client(api_key="k", base_url=batch_server.base_url, model="gpt-4o", timeout=10,
                                 max_retries=0, concurrency=4) as client:
        outcome = await judge_by_batch(store, run, eth, client, prices=builtin_prices(), poll_seconds=0.01,
                                       file_requests=4)
    assert outcome.status == "done" and outcome.counts == {"scored": ROWS}
    assert batch_server.created == ["batch_1", "batch_2", "batch_3"]  # 4 + 4 + 2 lines
    sizes = [batch.total for batch in batch_server.batches.values()]
    assert sizes == [4, 4, 2] and len(batch_server.batch_requests()) == ROWS


def test_a_failed_batch_names_its_error_and_the_run_goes_on_as_a_new_batch(tmp_path, batch_server) -> None:
    batch_server.plan = ["failed"]
    rows_file(tmp_path)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=batch_server, **FAST)

    text = flat(out)
    assert code == 1, out
    assert ("batch batch_1 failed with 10 of its 10 rows not judged (This line is not parseable as valid JSON.): "
            "resume the run live, or with --batch as a new batch") in text
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("pending", ROWS)]

    batch_server.plan = ["completed"]
    code, out = judgebot(tmp_path, "resume", "1", "--batch", "--yes", server=batch_server, **FAST)

    assert code == 0, out
    assert batch_server.created == ["batch_1", "batch_2"]  # sent again as a new batch, not live
    assert not [body for body in batch_server.bodies() if len(body["messages"]) != 2]
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", ROWS)]
    assert history(tmp_path, "SELECT status FROM run_batch ORDER BY id") == [("failed",), ("completed",)]


# --- samples and juries -----------------------------------------------------------------------------------------


def answer_of(line: dict) -> str:
    """The answer under test a batch line asks about."""
    return triple_of(line["body"])[2]


def test_three_samples_by_batch_are_three_lines_a_row_combined_like_live(tmp_path, batch_server) -> None:
    plan = {f"Use myStudies ({n}).": ["Correct"] for n in range(ROWS)}
    plan["Use myStudies (4)."] = ["Correct", "Generic", "Generic"]  # the samples of row 4 split
    script = Script({"gpt-4o": plan})
    batch_server.responder = priced(script)
    rows_file(tmp_path)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--samples", "3",
                         server=batch_server, **FAST)

    assert code == 0, out
    assert "x 3 samples with gpt-4o through the Batch API" in flat(out)
    lines = batch_server.batch_requests()
    assert len(lines) == 3 * ROWS and len(batch_server.created) == 1
    assert Counter(answer_of(line) for line in lines) == {f"Use myStudies ({n}).": 3 for n in range(ROWS)}
    assert {line["body"]["temperature"] for line in lines} == {0.7} and {line["body"]["model"] for line in lines} == {
        "gpt-4o"}
    assert sorted(tuple(line["custom_id"].split("-")[1:3]) for line in lines if answer_of(line) == "Use myStudies (0).") \
        == [("k0", "s1"), ("k0", "s2"), ("k0", "s3")]
    assert [body for body in batch_server.bodies() if len(body["messages"]) != 2] == []  # nothing asked live
    _, results = read_results(tmp_path / "rows.results.csv")
    assert {(row["status"], row["samples"]) for row in results} == {("scored", "3")}
    assert [(row["result_tag"], row["unsure"], row["agreement"]) for row in results if row["unsure"] == "true"] == [
        ("Generic", "true", "0.6667")]
    assert "unsure rows 1: rows 6" in flat(out)  # row 4 of the data is line 6 of the file
    half = builtin_prices().cost("gpt-4o", 1_000, 100, batch=True) or 0
    assert history(tmp_path, "SELECT round(sum(cost_usd), 8) FROM judgment") == [(round(3 * ROWS * half, 8),)]
    assert history(tmp_path, "SELECT count(*), round(sum(cost_usd), 8) FROM judgment_sample") == [
        (3 * ROWS, round(3 * ROWS * half, 8))]

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--samples", "3",
                         "--out", "again.csv", server=batch_server, **FAST)

    assert code == 0, out
    assert len(batch_server.created) == 1 and len(batch_server.bodies()) == 3 * ROWS  # every sample reused
    assert history(tmp_path, "SELECT count(*), sum(cost_usd), count(cached_from) FROM judgment WHERE run_id = 2") == [
        (ROWS, 0.0, ROWS)]
    _, again = read_results(tmp_path / "again.csv")
    assert [row["unsure"] for row in again] == [row["unsure"] for row in results]


def priced(script: Script):
    """`script`'s replies, each billed 1,000 tokens in and 100 out."""
    def answer(body: dict) -> Reply:
        reply = script(body)
        reply.tokens_in, reply.tokens_out = 1_000, 100
        return reply

    return answer


def test_a_jury_of_two_models_on_one_endpoint_sends_a_batch_file_per_model(tmp_path, batch_server) -> None:
    rows_file(tmp_path, 4)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--judges",
                         "gpt-4o,gpt-4o-mini", server=batch_server, **FAST)

    assert code == 0, out
    assert len(batch_server.created) == 2  # a batch file holds the requests of one model
    files = [[json.loads(line) for line in content.decode().splitlines()]
             for purpose, content in batch_server.files.values() if purpose == "batch"]
    assert sorted({line["body"]["model"] for line in lines} == {model} for lines, model in
                  zip(files, ("gpt-4o", "gpt-4o-mini"), strict=True)) == [True, True]
    assert sorted(len(lines) for lines in files) == [4, 4]
    assert {line["custom_id"].split("-")[1] for line in files[1]} == {"k1"}
    assert history(tmp_path, "SELECT DISTINCT judge_model, status, samples, unsure FROM judgment") == [
        ("gpt-4o+gpt-4o-mini", "scored", 2, 0)]
    assert history(tmp_path, "SELECT judge_model, count(*) FROM judgment_sample GROUP BY 1 ORDER BY 1") == [
        ("gpt-4o", 4), ("gpt-4o-mini", 4)]
    prices = builtin_prices()
    each = (prices.cost("gpt-4o", 1_000, 100, batch=True) or 0) + (prices.cost("gpt-4o-mini", 1_000, 100, batch=True)
                                                                   or 0)
    assert history(tmp_path, "SELECT round(sum(cost_usd), 8) FROM judgment") == [(round(4 * each, 8),)]


def test_an_expired_batch_keeps_the_samples_it_answered_and_a_live_resume_asks_only_the_rest(tmp_path,
                                                                                              batch_server) -> None:
    batch_server.plan, batch_server.partial = ["in_progress", "expired"], 4  # row 0: 3 of 3 samples; row 1: 1 of 3
    rows_file(tmp_path, 2)

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--samples", "3",
                         server=batch_server, **FAST)

    assert code == 1, out
    assert "batch batch_1 expired with 2 of its 6 requests not judged" in flat(out)
    assert history(tmp_path, "SELECT answer, status FROM judgment ORDER BY id") == [
        ("Use myStudies (0).", "scored"), ("Use myStudies (1).", "pending")]
    assert history(tmp_path, "SELECT j.answer, s.sample FROM judgment_sample s JOIN judgment j ON j.id = s.judgment_id "
                             "WHERE j.answer = 'Use myStudies (1).'") == [("Use myStudies (1).", 1)]
    asked = len(batch_server.bodies())

    code, out = judgebot(tmp_path, "resume", "1", "--yes", server=batch_server, **FAST)

    assert code == 0, out
    live = batch_server.bodies()[asked:]
    assert [triple_of(body)[2] for body in live] == ["Use myStudies (1).", "Use myStudies (1)."]  # the 2 missing
    assert {body["temperature"] for body in live} == {0.7} and len(batch_server.created) == 1
    assert history(tmp_path, "SELECT status, samples FROM judgment") == [("scored", 3), ("scored", 3)]
    assert history(tmp_path, "SELECT sample FROM judgment_sample s JOIN judgment j ON j.id = s.judgment_id "
                             "WHERE j.answer = 'Use myStudies (1).' ORDER BY sample") == [(1,), (2,), (3,)]


def test_a_jury_across_endpoints_sends_each_its_own_batch_or_says_which_has_no_batch_api(tmp_path,
                                                                                          batch_server) -> None:
    other = BatchJudgeServer().start()
    try:
        other.responder = lambda body: Reply(content=eth_reply("Generic").content, tokens_in=1_000, tokens_out=100)
        jury = tmp_path / "jury.yaml"
        jury.write_text(f"- model: gpt-4o\n- model: gpt-4o-mini\n  base_url: {other.base_url}\n  key_env: OTHER_KEY\n")
        rows_file(tmp_path, 3)

        code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--judges-file", jury,
                             server=batch_server, OTHER_KEY="other-secret", **FAST)

        assert code == 0, out
        assert (batch_server.created, other.created) == (["batch_1"], ["batch_1"])
        assert {line["body"]["model"] for line in batch_server.batch_requests()} == {"gpt-4o"}
        assert {line["body"]["model"] for line in other.batch_requests()} == {"gpt-4o-mini"}
        # gpt-4o says Correct (100), gpt-4o-mini Generic (25): an even split, decided for the lower headline
        assert history(tmp_path, "SELECT DISTINCT status, tag, unsure, agreement FROM judgment") == [
            ("scored", "Generic", 1, 0.5)]

        other.batch_api = False
        code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", "--judges-file", jury,
                             "--fresh", server=batch_server, OTHER_KEY="other-secret", **FAST)

        text = flat(out)
        assert code == 1, out
        assert f"the judge endpoint {other.base_url.rstrip('/')} (of judge gpt-4o-mini) has no Batch API" in text
        assert len(batch_server.created) == 1  # said before anything was sent
        code, out = judgebot(tmp_path, "resume", "2", server=batch_server, OTHER_KEY="other-secret", **FAST)
        assert code == 0, out
        assert history(tmp_path, "SELECT status, count(*) FROM judgment WHERE run_id = 2 GROUP BY 1") == [("scored", 3)]
    finally:
        other.stop()


async def test_an_output_collected_again_after_a_stop_asks_no_repair_twice(batch_server, store, rubrics) -> None:
    from bot.judge.panel import Panel
    from bot.llm.configured import make_judge_client
    from bot.runs import start_run
    from bot.runs.batch_lines import collect, make_line
    from bot.runs.job import RunJob
    from bot.store import samples_of
    from tests.support.scripted_judge import rows_of

    batch_server.responder = lambda body: eth_reply("Correct")  # the repairs
    eth = rubrics.get("eth")
    async with make_judge_client(api_key="k", base_url=batch_server.base_url, model="gpt-4o", timeout=10,
                                 max_retries=0, concurrency=4, temperature=0.7) as client:
        panel = Panel([client], samples=3)
        run = start_run(store, rubric=eth, rows=rows_of("x"), columns=["answer"], **panel.run_fields())
        job = RunJob(store, run, eth, panel, 25.0)
        row = next(iter_judgments(store, run.id))
        lines = [json.loads(make_line(job, row, 0, number).text) for number in (1, 2)]  # sample 3 not answered
        replies = [Reply(content='{"correctness": 7}'), eth_reply("Correct")]  # sample 1 breaks the rubric
        content = "".join(json.dumps({"custom_id": line["custom_id"], "response": {
            "status_code": 200, "body": BatchJudgeServer.completion(line["body"], reply)}}) + "\n"
            for line, reply in zip(lines, replies, strict=True))

        slots = {(row.id, 0, number) for number in (1, 2, 3)}
        assert await collect(job, content, set(slots)) == 2
        assert await collect(job, content, set(slots)) == 2  # as after a stop before the part was marked ended

    assert len(batch_server.bodies()) == 1  # the one repair, asked once
    assert sorted((s.sample, s.status) for s in samples_of(store, row.id)) == [(1, "scored"), (2, "scored")]
    assert next(iter_judgments(store, run.id)).status == "pending"  # sample 3 is still to ask


async def test_an_output_answers_only_what_its_part_asked_and_a_bad_line_ends_only_its_own_request(
        batch_server, store, rubrics) -> None:
    from bot.judge.panel import Panel
    from bot.llm.configured import make_judge_client
    from bot.runs import start_run
    from bot.runs.batch_lines import collect, custom_id, make_line
    from bot.runs.job import RunJob
    from tests.support.scripted_judge import rows_of

    batch_server.responder = lambda body: eth_reply("Correct")  # a repair, were one asked
    eth = rubrics.get("eth")
    async with make_judge_client(api_key="k", base_url=batch_server.base_url, model="gpt-4o", timeout=10,
                                 max_retries=0, concurrency=4) as client:
        panel = Panel([client])
        run = start_run(store, rubric=eth, rows=rows_of("a", "b", "c", "d"), columns=["answer"], **panel.run_fields())
        other = start_run(store, rubric=eth, rows=rows_of("waiting"), columns=["answer"], **panel.run_fields())
        job = RunJob(store, run, eth, panel)
        a, b, c, d = iter_judgments(store, run.id)
        [waiting] = iter_judgments(store, other.id)

        def answered(row, slot=None, **response) -> str:
            line = json.loads(make_line(job, row, 0, 1).text)
            if slot is not None:  # the same boundary, another slot named
                line["custom_id"] = custom_id(slot, line["custom_id"].rsplit("-", 1)[1])
            body = BatchJudgeServer.completion(line["body"], eth_reply("Correct"))
            return json.dumps({"custom_id": line["custom_id"], "response": {"status_code": 200, "body": body,
                                                                            **response}})

        good = answered(a)
        content = "\n".join([
            good, good,  # the same request answered twice: taken once
            answered(a, slot=(waiting.id, 0, 1)),  # another run's row: never asked by this part
            answered(a, slot=(b.id, 0, 7)),  # a sample never asked for
            "not json at all", json.dumps(["a", "list"]),  # no request can be told from them
            json.dumps({"custom_id": json.loads(make_line(job, c, 0, 1).text)["custom_id"], "response": "oops"}),
            json.dumps({"custom_id": json.loads(make_line(job, d, 0, 1).text)["custom_id"],
                        "response": {"status_code": 200, "body": "oops"}}),
        ])
        asked = {(row.id, 0, 1) for row in (a, b, c, d)}
        assert await collect(job, content, asked) == 3  # a, and c and d as errors
        assert asked == {(b.id, 0, 1)}  # b was not answered: still to ask

    rows = {row.id: row for row in iter_judgments(store, run.id)}
    assert rows[a.id].status == "scored" and rows[b.id].status == "pending"
    assert (rows[c.id].status, rows[c.id].error) == ("error", "the batch's line for this request holds no response object")
    assert rows[d.id].error == "the batch's line for this request holds no reply body object"
    assert [row.status for row in iter_judgments(store, other.id)] == ["pending"]  # the other run is untouched
    assert batch_server.bodies() == []  # no repair asked, none twice


def test_an_endpoint_that_refuses_its_batch_list_is_quoted_not_guessed_at(tmp_path, batch_server) -> None:
    batch_server.list_status = 403
    rows_file(tmp_path, 3)
    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--batch", server=batch_server, **FAST)
    text = flat(out)
    assert code == 1, out
    assert "answered 403 when asked for its batches (batches are not enabled for this organization)" in text
    assert "vLLM" not in text and "`judgebot resume 1` without --batch" in text
    assert batch_server.created == []


def test_a_file_of_pairs_goes_by_batch_in_both_orders(tmp_path, batch_server) -> None:
    from tests.support.pairwise_judge import PrefersMarked

    judge = PrefersMarked()
    batch_server.responder = judge
    write_rows(tmp_path / "pairs.csv", ["question", "reference", "answer_a", "answer_b"],
               [[f"q{n}", "r", f"a{n}" + (" [better]" if n % 2 else ""), f"b{n}" + ("" if n % 2 else " [better]")]
                for n in range(4)])

    code, out = judgebot(tmp_path, "judge", "pairs.csv", "--rubric", "pairwise", "--batch", server=batch_server,
                         **FAST)

    assert code == 0, out
    lines = batch_server.batch_requests()
    assert len(lines) == 8 and len(batch_server.created) == 1  # each pair twice, one line per order
    assert len({(question, first) for question, first, _ in judge.seen}) == 8
    _, results = read_results(tmp_path / "pairs.results.csv")
    assert [row["winner"] for row in results] == ["B", "A", "B", "A"]
    assert {row["consistent"] for row in results} == {"true"}
