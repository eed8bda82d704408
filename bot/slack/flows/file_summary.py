"""The end of a file's run: the summary card, the results file and the chart, each posted once, even across a crash."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC
from functools import partial
from pathlib import Path
from typing import Any

from bot.csvfiles.folders import work_folder
from bot.digest import score_distribution_png, win_rates_png
from bot.judge.lifetime import shutdown_advice
from bot.records import RowState, RunState, ShareState
from bot.rubric import Rubric
from bot.runs import BANDS, Summary
from bot.slack.context import Context
from bot.slack.files import upload
from bot.slack.flows import share_thread
from bot.slack.flows.earlier_posts import LOOK_BEFORE, LOOK_LIMIT
from bot.slack.flows.progress import ProgressMessage
from bot.slack.flows.progress_stream import end_stream
from bot.slack.messenger import slack_error
from bot.slack.text import escape, plain, shown
from bot.slack.views import file_run as view
from bot.slack.views import pairwise as pairwise_view
from bot.slack.views import run_stream
from bot.store import Run, SharedFile, get_run, get_share, move_share, process_name, update_share

log = logging.getLogger(__name__)

SUMMARY_EVENT = "judgebot_run_summary"  # message metadata that marks a run's summary, to find it after a crash


def _named(run: Run, what: str, suffix: str) -> str:
    """A file posted for a run: the shared file's name, what it is, and the run, such as answers-results-run7.csv."""
    return f"{Path(run.source_name or 'file').stem or 'file'}-{what}-run{run.id}{suffix}"


def results_name(run: Run) -> str:
    """The results file's name."""
    return _named(run, "results", ".csv")


def chart_name(run: Run) -> str:
    """The score chart's name."""
    return _named(run, "scores", ".png")


async def finish(ctx: Context, share: SharedFile, rubric: Rubric, *, seconds: float | None = None,
                 cancelled_by: str | None = None, claimed: bool = False, recovering: bool = False,
                 shown: ProgressMessage | None = None) -> None:
    """Post the summary card once, upload results and chart once, and show the end in the progress message.

    `claimed`: the caller moved the share to "finishing" already; `recovering`: an earlier process may
    have posted part of it, so the thread is looked at first.
    """
    if not claimed and not await ctx.db(move_share, share_id=share.id, to=ShareState.FINISHING,
                                        expect=(ShareState.RUNNING, ShareState.PAUSED), owner=process_name()):
        return  # finished already, or by another process
    try:
        await _finish(ctx, share, rubric, seconds, cancelled_by, recovering, shown)
    except asyncio.CancelledError:
        await share_thread.let_go(ctx, share)
        raise
    except Exception as err:
        log.exception("finishing the run of shared file %s failed", share.id)
        await ctx.db(move_share, share_id=share.id, to=ShareState.FAILED, owner=None, note=str(err))
        await share_thread.say(ctx, share, f":warning: Every row of *{escape(share.file_name)}* is judged and saved, but "
                               f"the summary could not be posted. `judgebot resume {share.run_id}` writes the "
                               "results file; `/judge stats` has the figures.")


async def _finish(ctx: Context, share: SharedFile, rubric: Rubric, seconds: float | None,
                  cancelled_by: str | None, recovering: bool, shown: ProgressMessage | None) -> None:
    found = await ctx.db(get_share, share_id=share.id)
    assert found is not None and found.run_id is not None, "a finishing share has a run"
    share = found
    run = await ctx.db(get_run, found.run_id)
    assert run is not None, "a share's run is never deleted"
    with work_folder() as folder:
        results = Path(folder) / results_name(run)
        summary, card, chart = await _summary(ctx, run, rubric, results)
        # An interrupted life may have posted the summary or the results without recording it: read the thread once
        thread = await _thread(ctx, share, run) if recovering and not (share.summary_ts and share.results_posted) else []
        if share.summary_ts is None:
            ts = _posted_summary(thread, run)
            if ts is None:
                ts = (await share_thread.post(ctx, share, card, what="the summary",
                                              metadata={"event_type": SUMMARY_EVENT,
                                                        "event_payload": {"run_id": run.id}})).ts
            if ts is None:
                raise RuntimeError("Slack refused the summary card")
            await ctx.db(update_share, share_id=share.id, summary_ts=ts)
        if not share.results_posted:
            if not _posted_files(thread, results.name):
                await _upload(ctx, share, run, rubric, results, chart)
            await ctx.db(update_share, share_id=share.id, results_posted=True)
    if share.progress_ts:
        paced = shown.latest.paced if shown is not None and shown.latest is not None else None
        end = view.finished(run, rubric.title, summary, seconds, cancelled_by, paced)
        done = summary.rows - summary.counts[RowState.MALFORMED] - summary.counts[RowState.PENDING]
        ending = run_stream.finished(done, summary.rows - summary.counts[RowState.MALFORMED], seconds,
                                     cancelled=run.status == RunState.CANCELLED)
        if shown is not None:  # the same message: the spacing of its edits holds for the last one too
            await shown.close(end, ending=ending)
        else:
            await ctx.say.edit(share.channel_id, share.progress_ts, end, what="a progress message")
            if share.stream_ts:  # the stream of a process stopped while it finished the run
                chunks = run_stream.RunStream(run, rubric.title, share.user_id).ending(None, ending)
                await end_stream(ctx.say, share.channel_id, share.stream_ts, chunks)
                await ctx.db(update_share, share_id=share.id, stream_ts=None)
    await ctx.db(move_share, share_id=share.id, to=ShareState.DONE, owner=None)


Chart = tuple[str, Callable[[], bytes]] | None  # what the chart shows, and how it is drawn (off the event loop)


async def _summary(ctx: Context, run: Run, rubric: Rubric, results: Path) -> tuple[Summary, dict[str, Any], Chart]:
    """The run ended by the engine (its labels saved, its review cases queued, its results written), and its summary
    card and chart: the score distribution, or a pairwise run's win rates. The card warns of its judges' coming
    shutdown, as the terminal's summary and a card do."""
    end = await ctx.engine.ending.end(ctx.store, run, rubric, results=results)
    warnings = [shutdown_advice(found, slack=True) for found in end.shutdowns]
    chart: Chart = None
    if end.pairs is not None:
        if end.pairs.report.matchups:
            title = f"{rubric.name} · {run.source_name or 'file'} · {end.pairs.report.judged:,} pairs"
            chart = "Win rate of B against A", partial(win_rates_png, title, pairwise_view.chart_rows(end.pairs))
        card = pairwise_view.pairs_card(run, rubric, end.pairs, results.name, end.review, warnings)
        return end.pairs.summary, card, chart
    summary = end.summary
    assert summary is not None, "a file's end has its summary"
    card = view.summary_card(run, rubric, summary, results.name, end.labels, end.review, end.models, warnings,
                             view_url=ctx.view_url)
    if summary.scored:
        title = f"{rubric.name} · {run.source_name or 'file'} · {summary.scored:,} scored rows"
        bands = {name: (figures.bands, figures.errors) for name, figures in summary.models.items()}
        chart = "Score distribution per model", partial(score_distribution_png, title, BANDS, bands)
    return summary, card, chart


async def _upload(ctx: Context, share: SharedFile, run: Run, rubric: Rubric, results: Path, chart: Chart) -> None:
    source = run.source_name or "file"
    uploads = [(results.name, f"Results of {plain(source, 120)} ({rubric.name})", results.read_bytes())]
    if chart is not None:
        uploads.append((chart_name(run), chart[0], await asyncio.to_thread(chart[1])))
    name = shown(source, 120)[0]
    comment = (f"Every pair of *{name}* with both orders' verdicts, and the win rates." if rubric.pairwise else
               f"Every row of *{name}* with its verdict, and the scores per model.")
    try:
        await upload(ctx.client, channel=share.channel_id, thread_ts=share.thread_ts, comment=comment, files=uploads)
    except Exception as err:
        log.warning("could not upload the results of run %s: %s", run.id, slack_error(err))
        await share_thread.say(ctx, share, f":warning: The results file could not be uploaded (`{slack_error(err)}`). Every "
                               f"verdict is saved: `judgebot resume {run.id}` writes them to a file.")


async def _thread(ctx: Context, share: SharedFile, run: Run) -> list[dict[str, Any]]:
    """The messages of the share's thread posted since its run finished (where an interrupted life's summary and
    results would be): one call of at most 15, as Slack allows an app distributed outside its Marketplace a call a
    minute."""
    since = f"{run.finished_at.replace(tzinfo=UTC).timestamp() - LOOK_BEFORE:.6f}" if run.finished_at else None
    try:
        page = await ctx.client.conversations_replies(channel=share.channel_id, ts=share.thread_ts, oldest=since,
                                                      include_all_metadata=True, limit=LOOK_LIMIT)
    except Exception as err:
        log.warning("could not read the thread %s in %s: %s", share.thread_ts, share.channel_id, slack_error(err))
        return []
    return list(page.get("messages") or [])


def _posted_summary(thread: list[dict[str, Any]], run: Run) -> str | None:
    for item in thread:
        meta = item.get("metadata") or {}
        if meta.get("event_type") == SUMMARY_EVENT and (meta.get("event_payload") or {}).get("run_id") == run.id:
            return str(item["ts"])
    return None


def _posted_files(thread: list[dict[str, Any]], name: str) -> bool:
    return any(f.get("name") == name for item in thread for f in item.get("files") or [])
