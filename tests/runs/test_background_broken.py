"""One background response that cannot be looked at while the endpoint answers the run's other looks (a 500 for
that id alone, a body that is not a response): it is given up on after as many looks in a row as a request has tries
(JUDGE_MAX_RETRIES + 1), cancelled at the endpoint, and its row ends as an error saying why, with no score and no
cost beyond what the endpoint reported; the run finishes. `judgebot resume --retry-errors` asks it again, in the
run's window, as it asks a live run's errors again. A response the endpoint no longer knows (404) is not polled on
either: its row stays pending and a resume asks it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.exits import EXIT_UNSCORED
from bot.csvfiles.reading import open_csv
from bot.judge.panel import Panel
from bot.llm.configured import make_judge_client
from bot.llm.prices import builtin_prices
from bot.records import RunState
from bot.runs import Engine, Face, Origin, Request, Rows, Tier
from bot.store import iter_judgments, open_backgrounds
from tests.support.cli import flat, history, judgebot, write_rows
from tests.support.openai_server import Reply

FAST = {"BATCH_POLL_SECONDS": "0.05", "JUDGE_MODEL": "gpt-4o", "JUDGE_API": "responses"}
GPT4O = builtin_prices().models["gpt-4o"]
ROW_2H = (1_000 * GPT4O.input + 100 * GPT4O.output) / 1e6 * 0.7  # what the stand-in bills a row in 2 h
BROKEN = "j2-k0-s1"  # the second row's slot


def rows_file(tmp_path: Path, rows: int) -> Path:
    return write_rows(tmp_path / "rows.csv", ["question", "reference", "answer"],
                      [[f"Exams {n}?", "Register in myStudies.", f"Use myStudies ({n})."] for n in range(rows)])


LOOKS = [
    # (what every look at the one response gets, how its row's error says it)
    ("500 for that id", Reply.server_error(500), "(500 Internal Server Error: The server had an error)"),
    ("503 for that id", Reply.proxy_unavailable(), "(503 Service Unavailable"),
    ("a proxy's page in a 200", Reply.html(), "(the judge endpoint answered 200 with a body that is not a response"),
    ("a response without a status", Reply(body='{"object": "response", "id": "x"}'),
     "(the judge endpoint answered 200 with a body that is not a response"),
]


@pytest.mark.parametrize(("reply", "said"), [row[1:] for row in LOOKS], ids=[row[0] for row in LOOKS])
async def test_one_response_that_cannot_be_looked_at_ends_its_row_as_an_error_and_the_run_finishes(
        tmp_path, store, rubrics, server, reply, said) -> None:
    eth = rubrics.get("eth")
    server.broken = {BROKEN: reply}
    panel = Panel.solo(make_judge_client(api_key="k", base_url=server.base_url, model="gpt-4o", timeout=10.0,
                                         max_retries=2, api="responses"))

    ended = await Engine(store, poll_seconds=0.05).judge(
        Request(eth, panel, Rows(open_csv(rows_file(tmp_path, 4)), Origin(source="test")), tier=Tier.BACKGROUND_2H,
                concurrency=4), Face())

    assert ended.outcome is not None and ended.outcome.status == RunState.DONE, ended.outcome
    rows = {judgment.id: judgment for judgment in iter_judgments(store, ended.run.id)}
    broken = rows.pop(2)
    assert {judgment.status for judgment in rows.values()} == {"scored"}
    assert broken.status == "error" and broken.passed is None and broken.headline is None  # no default score
    [given_up] = [asked for asked in server.backgrounds.values() if asked.body["metadata"]["judgebot_slot"] == BROKEN]
    assert broken.error is not None and broken.error.startswith(
        f"the judge endpoint failed 3 looks in a row at background response {given_up.id} while it answered the "
        "run's other looks "), broken.error
    assert said in broken.error and broken.error.endswith("costs nothing here: the endpoint reported no usage")
    assert given_up.polls == 3  # JUDGE_MAX_RETRIES + 1 looks, then none
    assert server.cancels == [given_up.id]  # cancelled, so that a reply nobody reads is not billed
    assert not broken.cost_usd and broken.tokens_in == broken.tokens_out == 0  # what the endpoint reported: nothing
    cost = sum(judgment.cost_usd or 0.0 for judgment in rows.values())
    assert cost == pytest.approx(3 * ROW_2H) and cost == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))
    assert open_backgrounds(store, ended.run.id) == []
    assert sorted(server.creates.values()) == [1] * 4


@pytest.mark.slow
def test_resume_retry_errors_asks_a_given_up_response_again_in_the_runs_window(tmp_path, server) -> None:
    rows_file(tmp_path, 3)
    server.broken = {BROKEN: Reply.server_error(500)}

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "2h", server=server, **FAST)

    text = flat(out)
    assert code == EXIT_UNSCORED, out  # finished with a row unscored, as a live run with an error row ends
    assert "judge errors 1" in text and "row 3 error: the judge endpoint failed 2 looks in a row at background " \
        "response" in text, out
    assert history(tmp_path, "SELECT status FROM run") == [("done",)]
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("error", 1), ("scored", 2)]
    assert history(tmp_path, "SELECT state, status FROM run_background WHERE judgment_id = 2") == [("ended", "unread")]
    code, out = judgebot(tmp_path, "resume", "1", server=server, **FAST)
    # as a live run's: finished, its error left as it is unless asked again
    assert code != 0 and "run 1 is finished; nothing to resume" in flat(out) and "`--retry-errors` judges its errors " \
        "again" in flat(out), out
    assert sum(server.creates.values()) == 3

    server.broken = {}
    code, out = judgebot(tmp_path, "resume", "1", "--retry-errors", server=server, **FAST)

    assert code == 0, out
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("scored", 3)]
    assert server.creates[BROKEN] == 2 and sum(server.creates.values()) == 4  # that row asked again, alone
    assert {body["background_options"]["completion_window"] for body in server.response_requests} == {"2h"}
    [(cost,)] = history(tmp_path, "SELECT sum(cost_usd) FROM judgment")
    assert cost == pytest.approx(3 * ROW_2H) and cost == pytest.approx(server.billed_usd(GPT4O.input, GPT4O.output))


@pytest.mark.slow
def test_a_response_the_endpoint_no_longer_knows_is_not_polled_on(tmp_path, server) -> None:
    rows_file(tmp_path, 3)
    server.broken = {BROKEN: Reply(status=404, error={"message": "No response found", "type": "invalid_request_error",
                                                      "param": None, "code": "not_found"})}

    code, out = judgebot(tmp_path, "judge", "rows.csv", "--rubric", "eth", "--background", "2h", server=server, **FAST)

    assert code != 0 and "no longer knows response" in flat(out), out
    [lost] = [asked for asked in server.backgrounds.values() if asked.body["metadata"]["judgebot_slot"] == BROKEN]
    assert lost.polls == 1  # looked at once
    assert history(tmp_path, "SELECT status, count(*) FROM judgment GROUP BY status") == [("pending", 1), ("scored", 2)]
    server.broken = {}
    code, out = judgebot(tmp_path, "resume", "1", server=server, **FAST)
    assert code == 0, out
    assert server.creates[BROKEN] == 2 and sum(server.creates.values()) == 4
