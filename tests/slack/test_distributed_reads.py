"""Within what Slack allows an app distributed outside its Marketplace: conversations.history and
conversations.replies a call a minute and 15 messages a call (the tests' Slack server in its `distributed` mode).
A file run reads no thread; its recovery after a life that posted its summary and results without recording them
reads the thread once and posts nothing twice. (The digest and the reviewers' nudges: tests/digest/test_schedule.py
and tests/slack/test_review.py, in the same mode.)"""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import select

from bot.records import ShareState
from bot.slack.flows import file_summary
from bot.store import SharedFile
from tests.support.slack_files import eth_csv, finished_thread, grade_by_answer, share, summaries, wait_until


async def test_a_recovered_run_reads_its_thread_once_and_posts_nothing_twice(slack, slack_server, judge_server,
                                                                            http_bot, rubrics):
    slack_server.distributed = True
    judge_server.responder = grade_by_answer
    event = await share(slack, slack_server, eth_csv(6), text="eth")
    await finished_thread(slack_server, "C0GENERAL", event["ts"])
    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1
    assert len(slack_server.uploads("C0GENERAL", event["ts"])) == 2
    assert slack_server.calls_to("conversations.replies") == [] == slack_server.calls_to("conversations.history")

    # A life that posted the summary and the results, then died before recording either
    store = http_bot.context.store

    def state() -> str:
        with store.session() as session:
            return session.exec(select(SharedFile.state).where(SharedFile.thread_ts == event["ts"])).one()

    await wait_until(lambda: state() == ShareState.DONE, what="the run's end recorded")
    with store.session() as session:
        session.execute(update(SharedFile).where(SharedFile.thread_ts == event["ts"])
                        .values(state=ShareState.FINISHING, summary_ts=None, results_posted=False))
        session.commit()
        found = session.exec(select(SharedFile).where(SharedFile.thread_ts == event["ts"])).one()
    await file_summary.finish(http_bot.context, found, rubrics.get("eth"), claimed=True, recovering=True)

    assert len(summaries(slack_server, "C0GENERAL", event["ts"])) == 1  # found, not posted again
    assert len(slack_server.uploads("C0GENERAL", event["ts"])) == 2
    [read] = slack_server.calls_to("conversations.replies")
    assert int(read.params["limit"]) <= 15 and slack_server.read_refused == []
    with store.session() as session:
        done = session.exec(select(SharedFile).where(SharedFile.thread_ts == event["ts"])).one()
    assert done.state == ShareState.DONE and done.summary_ts is not None and done.results_posted
