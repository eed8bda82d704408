"""A pairwise rubric in Slack: it judges pairs of answers, never one triple typed after /judge."""

from __future__ import annotations

import asyncio
import csv
import io

from tests.support.pairwise_judge import PrefersMarked
from tests.support.slack_files import blocks_text, finished_thread, reply_to, results_rows, share, summaries


async def test_judge_with_a_pairwise_rubric_asks_for_a_file_of_pairs(slack, slack_server, judge_server):
    await slack.command("pairwise How do I register? || In myStudies. || Use myStudies.")
    told = (await slack_server.await_for("response_url"))[0]
    text = told.params["text"]
    assert "*pairwise* compares two answers to each question" in text and "answer_a and answer_b" in text
    assert "Use myStudies." in text  # what was typed is not lost
    await asyncio.sleep(0.2)
    assert judge_server.bodies() == [] and slack_server.calls_to("chat.postMessage") == []


def pairs_csv(rows: list[tuple[str, str, str, str]]) -> bytes:
    """A file of pairs: question, answer_a, answer_b, model_b (model_a is bot-v1)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "reference", "answer_a", "answer_b", "model_a", "model_b"])
    for question, a, b, model_b in rows:
        writer.writerow([question, "Use myStudies.", a, b, "bot-v1", model_b])
    return out.getvalue().encode()


async def test_a_shared_file_of_pairs_is_judged_pairwise_with_a_card_results_and_chart(slack, slack_server,
                                                                                      judge_server, bot_settings):
    judge = PrefersMarked()
    judge_server.responder = judge
    sneaky = "<!channel> bot-v2"
    rows = [(f"q{n}" + (" [flip]" if n == 4 else ""), f"v1 {n}", f"v2 {n} [better]" if n % 4 else f"v2 {n}", sneaky)
            for n in range(8)]
    event = await share(slack, slack_server, pairs_csv(rows), name="pairs.csv", text="v1 against v2")
    thread = await finished_thread(slack_server, "C0GENERAL", event["ts"])

    assert len(judge.seen) == 16  # no rubric named: a file of pairs is judged pairwise, each pair in both orders
    [summary] = summaries(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summary)
    assert "Pairwise · pairs.csv · Which answer is better" in card
    assert "&lt;!channel&gt; bot-v2 over bot-v1" in card and "<!channel>" not in card + summary["text"]
    # q0 (neither marked) and q4 (inconsistent) ties, the 6 others won by v2: (6 + 2 / 2) / 8 = 88%
    assert "88% (95% CI" in card and "won 6, lost 0, tied 2 (1 inconsistent)" in card
    assert "*Position consistency*: 88% (7 of 8 pairs named the same winner in both orders" in card
    assert "row 6: q4 [flip]" in card
    assert "Judged" in blocks_text(thread[0])
    uploads = slack_server.uploads("C0GENERAL", event["ts"])
    assert [u["name"] for u in uploads] == ["pairs-results-run1.csv", "pairs-scores-run1.png"]
    assert uploads[1]["content"].startswith(b"\x89PNG")
    results = results_rows(uploads[0])
    assert len(results) == 8 and [r["winner"] for r in results] == ["tie", "B", "B", "B", "tie", "B", "B", "B"]
    # the pairs' judgments stay out of the channel's figures of models
    stats = await slack.command("stats")
    assert "bot-v2" not in stats.text()


async def test_a_file_of_pairs_named_with_a_rubric_of_one_answer_is_refused_naming_pairwise(slack, slack_server,
                                                                                         judge_server):
    event = await share(slack, slack_server, pairs_csv([("q", "a", "b", "bot-v2")]), name="pairs.csv",
                        text="rubric: eth")
    reply = await reply_to(slack_server, event)
    assert "each row holds two answers (answer_a, answer_b)" in reply and "pairwise" in reply
    assert judge_server.bodies() == []
