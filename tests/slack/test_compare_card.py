"""`/judge compare A B`: the channel's own history paired on the same questions, each case once with its standing
verdict, one rubric at a time, as a card with the charts of paired differences in its thread; another channel's
answers never count."""

from __future__ import annotations

import json

from scipy import stats

from bot.records import Verdict
from bot.store import Store, add_rows, create_run, iter_judgments, save_verdict
from bot.trust.stats.mcnemar import p_text
from tests.support.slack_messages import blocks_json

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-test"}
SCORES = {"Correct": (2, 2, 100.0), "Generic": (0, 1, 25.0)}


def answered(store: Store, channel: str, model: str, tags: dict[str, str], **fields: str) -> None:
    """A run of `model`'s answers in `channel`, each judged with its tag ("invalid": a reply that broke the rules)."""
    common = {**COMMON, **fields}
    run = create_run(store, **common, channel_id=channel, team_id="T0TEST")
    add_rows(store, [{**common, "run_id": run.id, "row_number": n, "status": "pending", "question": question,
                     "reference": "r", "answer": f"{model} on {question}", "channel_id": channel, "team_id": "T0TEST",
                     "model_name": model} for n, question in enumerate(tags, 1)])
    for row, tag in zip(iter_judgments(store, run.id), tags.values(), strict=True):
        if tag == "invalid":
            verdict = Verdict(status="invalid", error="the reply broke the rubric", raw_reply="?", prompt_hash="p" * 32,
                              **common)
        else:
            correctness, completeness, headline = SCORES[tag]
            output = {"correctness": correctness, "completeness": completeness, "result_tag": tag, "reasoning": "r"}
            verdict = Verdict(status="scored", output=output, headline=headline, passed=tag == "Correct", label=tag,
                              tag=tag, raw_reply="{}", prompt_hash="p" * 32, **common)
        assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")


def interval(b: list[float], a: list[float]) -> str:
    """scipy's paired t interval of B less A, held within -100..+100 as the card shows it."""
    found = stats.ttest_rel(b, a).confidence_interval(0.95)
    return f"95% CI {max(found.low, -100):+.1f} to {min(found.high, 100):+.1f} (paired t over {len(a)} questions)"


async def test_compare_posts_the_channels_paired_figures_and_a_chart(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    v1 = {"Q1 <!channel>?": "Generic", "Q2?": "Correct", "Q3?": "Correct", "Q5?": "Generic", "Q6?": "invalid"}
    answered(store, "C0GENERAL", "bot-v1", v1)
    for _ in range(3):  # read again three times: the same cases, each counted once
        answered(store, "C0GENERAL", "bot-v1", {"Q1 <!channel>?": "Generic", "Q5?": "Generic"})
    answered(store, "C0GENERAL", "bot-v2", {"Q1 <!channel>?": "Correct", "Q2?": "Correct", "Q4?": "Correct",
                                            "Q5?": "Correct", "Q6?": "Correct"})
    answered(store, "C0OTHER", "bot-v2", {"Q3?": "Generic"})  # another channel: never paired here
    team = {"rubric_name": "team-eth", "rubric_hash": "t" * 16}  # a second rubric on the same questions
    answered(store, "C0GENERAL", "bot-v1", {"Q1 <!channel>?": "Correct", "Q2?": "Correct"}, **team)
    answered(store, "C0GENERAL", "bot-v2", {"Q1 <!channel>?": "Generic", "Q2?": "Correct"}, **team,
             judge_model="judge-other")

    await slack.command("compare bot-v1 bot-v2 all")
    [card] = await slack_server.await_for("chat.postMessage", lambda c: "better than" in str(c.params.get("text")))
    text = blocks_json(card.params)
    eth, team_eth = text.split("*Rubric ")[1:]
    # eth: Q1 25 -> 100, Q2 100 -> 100, Q5 25 -> 100; Q3 and Q4 answered by one side only; Q6 not scored for v1
    assert eth.startswith("eth*: bot-v2 against bot-v1 on the 3 questions both have a score for (rubric eth): "
                          f"paired difference +50.0, {interval([100, 100, 100], [25, 100, 25])}")
    assert f"higher on 2, equal on 1, lower on 0 (sign test {p_text(stats.binomtest(2, 2).pvalue)})" in eth
    assert ("left out: 1 answered by bot-v1 only, 1 answered by bot-v2 only, 1 not scored for bot-v1 (invalid: 1, "
            "error: 0)") in eth
    assert "judged by judge-test on both sides" in eth and "different judges" not in eth
    # team-eth: its own block, never pooled with eth's; its sides judged by different judges
    assert team_eth.startswith("team-eth*: bot-v2 against bot-v1 on the 2 questions both have a score for (rubric "
                               "team-eth): paired difference -37.5, 95% CI -100.0 to +100.0")
    assert "judged by: bot-v1 judge-test (2); bot-v2 judge-other (2)" in team_eth
    assert "on 2 of the 2 pairs the two answers were judged by different judges" in team_eth
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text
    [upload] = await slack_server.await_for("files.completeUploadExternal")
    assert upload.params["channel_id"] == "C0GENERAL"
    files = upload.params["files"]
    titles = [item["title"] for item in (json.loads(files) if isinstance(files, str) else files)]
    assert titles == ["bot-v2 against bot-v1, rubric eth: 3 questions",
                      "bot-v2 against bot-v1, rubric team-eth: 2 questions"]

    await slack.command("compare bot-v1 bot-v9")
    said = (await slack_server.await_for("response_url"))[-1].params
    assert "was answered by both `bot-v1` and `bot-v9`" in blocks_json(said)
