"""A file shared in a channel that chose its own judge is judged by that judge; in another channel, by the configured
one."""

from __future__ import annotations

from bot.store import set_channel_judge
from tests.support.replies import eth_reply
from tests.support.slack_files import finished_thread, share


async def test_a_shared_file_is_judged_by_the_channels_own_judge(slack, slack_server, http_bot, judge_server) -> None:
    judge_server.responder = lambda body: eth_reply("Correct")
    set_channel_judge(http_bot.context.store, team_id="T0TEST", channel_id="C0GENERAL", judge_model="judge-own",
                      user_id="U0ADMIN")
    rows = b"question,reference,answer\nWhere?,In myStudies.,Use myStudies.\n"
    event = await share(slack, slack_server, rows, text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    other = await share(slack, slack_server, rows.replace(b"Where?", b"When?"), text="eth", channel="C0OTHER")
    await finished_thread(slack_server, "C0OTHER", other["ts"])
    assert [body["model"] for body in judge_server.bodies()] == ["judge-own", "judge-test"]
