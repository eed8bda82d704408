"""A shared file holding two models under test on the same questions gets the paired comparison in its summary: the
questions both have a score for, and the rows left out and why."""

from __future__ import annotations

from scipy import stats

from bot.trust.stats.mcnemar import p_text
from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of
from tests.support.slack_files import blocks_text, finished_thread, share, summaries

TAGS = {"v1 a": "Generic", "v1 b": "Correct", "v1 c": "Generic", "v2 a": "Correct", "v2 b": "Correct",
        "v2 c": "Correct", "v2 d": "Correct"}


def judge(body: dict) -> Reply:
    answer = triple_of(body)[2]
    return Reply(content="Looks fine to me.") if answer == "v1 d" else eth_reply(TAGS[answer])  # v1 d: invalid


async def test_a_files_summary_says_whether_b_is_better_than_a(slack, slack_server, judge_server) -> None:
    judge_server.responder = judge
    content = (b"question,reference,answer,model\nQ1?,R.,v1 a,bot-<v1>\nQ2?,R.,v1 b,bot-<v1>\nQ3?,R.,v1 c,bot-<v1>\n"
               b"Q4?,R.,v1 d,bot-<v1>\nQ1?,R.,v2 a,bot-v2\nQ2?,R.,v2 b,bot-v2\nQ3?,R.,v2 c,bot-v2\nQ4?,R.,v2 d,bot-v2\n")
    event = await share(slack, slack_server, content, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    card = blocks_text(summaries(slack_server, "C0GENERAL", event["ts"])[0])
    # Q1: 25 -> 100, Q2: 100 -> 100, Q3: 25 -> 100; Q4 left out: v1's verdict broke the rubric
    found = stats.ttest_rel([100, 100, 100], [25, 100, 25]).confidence_interval(0.95)
    assert "Is bot-v2 better than bot-&lt;v1&gt;?" in card  # the model name from the file is escaped
    assert (f"on the 3 questions both have a score for (rubric eth): paired difference +50.0, 95% CI "
            f"{found.low:+.1f} to {min(found.high, 100):+.1f} (paired t over 3 questions)") in card
    assert f"higher on 2, equal on 1, lower on 0 (sign test {p_text(stats.binomtest(2, 2).pvalue)})" in card
    assert "left out: 1 not scored for bot-&lt;v1&gt; (invalid: 1, error: 0)" in card
    assert "answered by" not in card
