"""A pairwise rubric in Slack: it judges pairs of answers, never one triple typed after /judge."""

from __future__ import annotations

import asyncio
import csv
import io

from bot.rubric import load_rubrics
from bot.runs.pairwise_summary import export_pairs
from bot.slack.views.review import REVIEW_PICK
from bot.store import Store, open_cases, recent_runs
from tests.support.pairwise_judge import PrefersMarked
from tests.support.slack_files import blocks_text, finished_thread, reply_to, results_rows, share, summaries
from tests.support.slack_messages import blocks_json, buttons


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
    assert "*8 pairs* judged in both orders: 6 with a winner, 2 tied" in card  # a tie has no winner
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


async def test_an_inconsistent_pair_is_settled_in_the_review_queue_blind_to_the_models(slack, slack_server,
                                                                                       judge_server, bot_settings):
    judge = PrefersMarked()
    judge_server.responder = judge
    rows = [("q0 [flip]", "v1 0", "v2 0 [better]", "secret-model"), ("q1", "v1 1", "v2 1 [better]", "secret-model"),
            ("q2 [flip]", "v1 2 [better]", "v2 2", "secret-model")]
    event = await share(slack, slack_server, pairs_csv(rows), name="pairs.csv", text="rubric: pairwise")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    assert "2 pairs sent to review (2 inconsistent)" in card and "`/judge review` asks you which answer" in card
    assert "tied 2 (2 inconsistent)" in card

    await slack.command("review")
    offered = (await slack_server.await_for("response_url"))[0].params
    shown = blocks_json(offered)
    assert "Which answer is better?" in shown and "Answer A" in shown and "v2 0 [better]" in shown
    assert "secret-model" not in shown + offered["text"] and "bot-v1" not in shown  # blind to the models' names
    assert "A with A shown first, B with B shown first" in shown  # what the judge said in each order
    picks = buttons(offered)
    assert set(picks) >= {f"{REVIEW_PICK}A", f"{REVIEW_PICK}B", f"{REVIEW_PICK}tie"}
    case = picks[f"{REVIEW_PICK}B"]

    await slack.click(f"{REVIEW_PICK}B", case, channel="C0OTHER", message_ts="1.0")  # not from its channel: refused
    assert "cannot find this case" in blocks_json((await slack_server.await_for("response_url", count=2))[1].params)
    await slack.click(f"{REVIEW_PICK}B", case, channel="C0GENERAL", message_ts="1.0")
    after = (await slack_server.await_for("response_url", count=3))[2].params
    assert "Saved: you said B is better" in blocks_json(after) and "q2 [flip]" in blocks_json(after)  # the next one

    store = Store.open(bot_settings.db_url)
    [run] = [r for r in recent_runs(store) if r.rubric_name == "pairwise"]
    found = export_pairs(store, run=run, rubric=load_rubrics().get("pairwise"), out=None)
    assert [pair.outcome for pair in found.pairs] == ["B", "B", "tie"]  # the person settled q0; q2 waits
    assert found.report.settled == 1 and found.report.labeled == 1
    assert (found.report.right_first, found.report.right_second) == (0, 1)  # the judge was right only with B first
    [match] = found.report.matchups
    assert (match.wins, match.losses, match.ties, match.inconsistent) == (2, 0, 1, 2)
    assert len(open_cases(store, team_id="T0TEST", channel_id="C0GENERAL")) == 1
