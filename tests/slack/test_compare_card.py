"""`/judge compare A B`: the channel's own history paired on the same questions, as a card with the chart of paired
differences in its thread; another channel's answers never count."""

from __future__ import annotations

import json

from bot.records import Verdict
from bot.store import Store
from tests.support.slack_messages import blocks_json

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-test"}
SCORES = {"Correct": (2, 2, 100.0), "Generic": (0, 1, 25.0)}


def answered(store: Store, channel: str, model: str, tags: dict[str, str]) -> None:
    run = store.create_run(**COMMON, channel_id=channel, team_id="T0TEST")
    store.add_rows([{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": question,
                     "reference": "r", "answer": f"{model} on {question}", "channel_id": channel, "team_id": "T0TEST",
                     "model_name": model} for n, question in enumerate(tags, 1)])
    for row, tag in zip(store.iter_judgments(run.id), tags.values(), strict=True):
        correctness, completeness, headline = SCORES[tag]
        output = {"correctness": correctness, "completeness": completeness, "result_tag": tag, "reasoning": "r"}
        assert store.save_verdict(row.id, Verdict(status="scored", output=output, headline=headline,
                                                  passed=tag == "Correct", label=tag, tag=tag, raw_reply="{}",
                                                  prompt_hash="p" * 32, **COMMON), cache_key=f"k{row.id}")


async def test_compare_posts_the_channels_paired_figures_and_a_chart(slack, slack_server, http_bot) -> None:
    store = http_bot.context.store
    answered(store, "C0GENERAL", "bot-v1", {"Q1 <!channel>?": "Generic", "Q2?": "Correct", "Q3?": "Correct"})
    answered(store, "C0GENERAL", "bot-v2", {"Q1 <!channel>?": "Correct", "Q2?": "Correct", "Q4?": "Correct"})
    answered(store, "C0OTHER", "bot-v2", {"Q3?": "Generic"})  # another channel: never paired here

    await slack.command("compare bot-v1 bot-v2 all")
    [card] = await slack_server.await_for("chat.postMessage", lambda c: "better than" in str(c.params.get("text")))
    text = blocks_json(card.params)
    # Q1: 25 -> 100, Q2: 100 -> 100; Q3 and Q4 answered by one side only
    assert "bot-v2 against bot-v1 on the 2 questions both answered: paired difference +37.5" in text
    assert "higher on 1, equal on 1, lower on 0" in text and "1 answered by bot-v1 only, 1 by bot-v2 only" in text
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text
    [upload] = await slack_server.await_for("files.completeUploadExternal")
    assert upload.params["channel_id"] == "C0GENERAL"
    files = upload.params["files"]
    assert (json.loads(files) if isinstance(files, str) else files)[0]["title"].startswith("bot-v2 against bot-v1")

    await slack.command("compare bot-v1 bot-v9")
    said = (await slack_server.await_for("response_url"))[-1].params
    assert "was answered by both `bot-v1` and `bot-v9`" in blocks_json(said)
