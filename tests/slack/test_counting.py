"""Each case counted once in Slack: a model's failing rows shared again (their verdicts read from the cache) and a card
judged again with Re-judge move no figure of `/judge stats` or the digest."""

from __future__ import annotations

import csv
import io

import pytest

from bot.slack.views.card import REJUDGE
from tests.support.pairwise_judge import PrefersMarked
from tests.support.replies import eth_reply
from tests.support.slack_files import blocks_text, finished_thread, grade_by_answer, share, summaries
from tests.support.slack_messages import buttons, card_of, table_dicts

HEADER = "question,reference,answer,model\n"
FIGURES = ("Model", "Rubric", "Cases", "Mean /100", "Pass", "Judge errors", "Tags")


def eval_files() -> tuple[bytes, bytes]:
    """hv1 and hv2 on the same 10 questions (hv1 right on half, hv2 on all), and hv1's five failing rows alone."""
    rows, failing = [HEADER], [HEADER]
    for n in range(10):
        hv1 = f"Use myStudies step {n}." if n % 2 == 0 else f"Ask someone about exam {n}."
        rows += [f"Exam {n}?,Register in myStudies.,{hv1},hv1\n", f"Exam {n}?,Register in myStudies.,myStudies {n}.,hv2\n"]
        if n % 2:
            failing.append(f"Exam {n}?,Register in myStudies.,{hv1},hv1\n")
    return "".join(rows).encode(), "".join(failing).encode()


async def stats(slack, slack_server) -> list[dict]:
    count = len(slack_server.calls_to("response_url"))
    await slack.command("stats")
    [answer] = (await slack_server.await_for("response_url", lambda c: "stats" in c.params.get("text", ""),
                                             count=count + 1))[count:]
    return [{name: row[name] for name in FIGURES if name in row} | {"again": row.get("Judged again", "0")}
            for row in table_dicts(answer.params)]


async def digest(slack, slack_server) -> list[dict]:
    count = len(slack_server.calls_to("chat.postMessage"))
    await slack.command("digest now")
    post = (await slack_server.await_for("chat.postMessage", count=count + 1))[-1]
    return table_dicts(post.params)


@pytest.mark.slow  # several commands or files judged: 4-5 s beside other tests
async def test_shared_again_and_judged_again_the_figures_stay(bot_with, slack_server, judge_server):
    judge_server.responder = grade_by_answer
    slack = await bot_with()
    everything, failing = eval_files()
    event = await share(slack, slack_server, everything, name="eval.csv")
    await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
    before_stats, before_digest = await stats(slack, slack_server), await digest(slack, slack_server)
    hv1 = next(row for row in before_stats if row["Model"] == "hv1")
    assert (hv1["Cases"], hv1["Pass"], hv1["again"]) == ("10", "50%", "0"), before_stats
    assert [row["Cases"] for row in before_digest] == ["10", "10"]

    for n in range(2):  # the failing rows shared again twice: their verdicts come from the cache
        again = await share(slack, slack_server, failing, name=f"failing-{n}.csv")
        await finished_thread(slack_server, "C0GENERAL", again["ts"], timeout=60)
    assert len(judge_server.bodies()) == 20

    after_stats = await stats(slack, slack_server)
    assert [{k: v for k, v in row.items() if k != "again"} for row in after_stats] == [
        {k: v for k, v in row.items() if k != "again"} for row in before_stats]
    assert next(row for row in after_stats if row["Model"] == "hv1")["again"] == "10"  # shown apart, not counted
    assert await digest(slack, slack_server) == before_digest

    # A card judged again, fresh, by the same judge: still one case.
    judge_server.responder = lambda body: eth_reply("Correct")
    await slack.command("eth A new question? || Register in myStudies. || Use myStudies.")
    card = await card_of(slack_server)
    with_card = await stats(slack, slack_server)
    await slack.click(REJUDGE, buttons(card)[REJUDGE], channel="C0GENERAL", message_ts=card["ts"])
    await card_of(slack_server, count=2)
    assert len(judge_server.bodies()) == 22
    rejudged = await stats(slack, slack_server)
    assert [{k: v for k, v in row.items() if k != "again"} for row in rejudged] == [
        {k: v for k, v in row.items() if k != "again"} for row in with_card]


async def test_a_file_of_pairs_shared_three_times_is_its_pairs_once_in_the_digest(bot_with, slack_server, judge_server):
    judge_server.responder = PrefersMarked()
    slack = await bot_with()
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "reference", "answer_a", "answer_b", "model_a", "model_b"])
    for n in range(20):  # bot-v2's answer is the better one in 14 pairs of 20
        better_b = n % 10 < 7
        writer.writerow([f"q{n}", "Use myStudies.", f"v1 {n}" + ("" if better_b else " [better]"),
                         f"v2 {n}" + (" [better]" if better_b else ""), "bot-v1", "bot-v2"])
    for n in range(3):
        event = await share(slack, slack_server, out.getvalue().encode(), name=f"pairs-{n}.csv", text="v1 against v2")
        await finished_thread(slack_server, "C0GENERAL", event["ts"], timeout=60)
        [summary] = summaries(slack_server, "C0GENERAL", event["ts"])
        assert "of 20 pairs" in blocks_text(summary)

    count = len(slack_server.calls_to("chat.postMessage"))
    await slack.command("digest now")
    post = (await slack_server.await_for("chat.postMessage", count=count + 1))[-1]
    text = blocks_text(post.params)
    assert "bot-v2 over bot-v1: 70%" in text and "of 20 pairs; won 14, lost 6, tied 0" in text, text
    assert "of 60 pairs" not in text
