"""`judgebot review`: the cases of a channel's review queue (or the terminal's) that wait for a person's label, with
--out as a CSV to fill in, and with --nudge today's nudge of its reviewers; `review label` takes a person's labels
case by case from the keyboard."""

from __future__ import annotations

import getpass
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_INTERRUPTED, EXIT_OK
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.store import ReviewCase
    from bot.trust.labels import HumanValues
    from bot.trust.review_queue import Offered

LABELER_LENGTH = 32  # what the history keeps of who labeled
NOTE_LENGTH = 3000  # what Slack's label form takes


async def review(ctx: Context) -> int:
    """`judgebot review`: why each open case was queued, its question and the judge's verdict, oldest first."""
    from rich.table import Table

    from bot.records import ANY_TEAM
    from bot.store import utcnow, waiting_cases
    from bot.trust.review_reasons import REASONS

    settled()
    if ctx.args.limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    channel = ctx.args.channel
    if ctx.args.nudge:
        if ctx.args.json:
            raise UsageError("--json lists the queue's cases; --nudge sends the reviewers' nudge: give one of them")
        if not channel:
            raise UsageError("--nudge nudges a Slack channel's reviewers: give --channel ID")
        from bot.slack.flows.review_nudge import nudge_from_terminal  # the Slack libraries load only to nudge

        ctx.console.print(await nudge_from_terminal(ctx.settings, ctx.store, channel), highlight=False)
        return EXIT_OK
    if ctx.args.out is not None:
        if ctx.args.json:
            raise UsageError("--json lists the queue's cases; --out writes them as a CSV to fill in: give one of them")
        return write_out(ctx)
    cases = waiting_cases(ctx.store, team_id=ANY_TEAM if channel else None, channel_id=channel, limit=ctx.args.limit)
    if ctx.args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.review import ReviewDocument

        print_json(ReviewDocument.of(channel, cases))
        return EXIT_OK
    where = f"channel {channel}" if channel else "the terminal"
    if not cases:
        ctx.console.print(f"No case of {where} waits for a label.", highlight=False)
        return EXIT_OK
    table = Table(title=f"Cases of {shown(where)} waiting for a label, oldest first")
    for name in ("queued", "why", "rubric", "question", "the judge said", "#"):
        table.add_column(name)
    now = utcnow()
    for case, judgment in cases:
        days = (now - case.created_at) // timedelta(days=1)
        table.add_row(f"{days} d ago" if days else "today", REASONS.get(case.reason, case.reason)
                      + (" (at random)" if case.random and case.reason != "random" else ""),
                      shown(case.rubric_name), shown(judgment.question[:80]), shown((judgment.label or "")[:60]),
                      str(judgment.id))
    ctx.console.print(table)
    ctx.console.print("`judgebot review label` asks for these labels one case at a time (in Slack, `/judge review` "
                      "in the channel); `judgebot review --out FILE` writes them as a CSV to fill in.", highlight=False)
    return EXIT_OK


def where_of(channel: str | None) -> str:
    """The queue as a person names it."""
    return f"channel {channel}" if channel else "the terminal"


def write_out(ctx: Context) -> int:
    """`judgebot review --out FILE`: the open cases of one rubric as a CSV with empty human_ columns; judged again
    (or read by `labels import`), its labels close the cases they label."""
    from bot.trust.review_files import is_blind, queue_cases, write_queue

    args, channel = ctx.args, ctx.args.channel
    cases = queue_cases(ctx.store, channel)
    names = sorted({case.rubric_name for case, _ in cases})
    if args.rubric:
        rubric = ctx.rubrics.get(args.rubric)
    elif len(names) > 1:
        raise UsageError(f"the queue of {where_of(channel)} holds cases of {len(names)} rubrics ({', '.join(names)}); "
                         "a file holds one: give --rubric NAME")
    elif names:
        rubric = ctx.rubrics.get(names[0])
    else:
        ctx.console.print(f"No case of {shown(where_of(channel))} waits for a label: nothing written.", highlight=False)
        return EXIT_OK
    if args.out.is_dir():
        raise UsageError(f"{args.out} is a directory; give --out a file name")
    blind: dict[tuple[str | None, str | None], bool] = {}

    def blind_case(case: ReviewCase) -> bool:
        key = (case.team_id, case.channel_id)
        if key not in blind:
            blind[key] = is_blind(ctx.store, case)
        return blind[key]

    try:
        with args.out.open("w", encoding="utf-8-sig", newline="") as out:  # the BOM: Excel then reads UTF-8
            written = write_queue(out, cases, rubric, blind=blind_case)
    except OSError as err:
        raise UsageError(f"cannot write {args.out}: {err.strerror or err}") from None
    said = (f"{written.cases:,} open {'case' if written.cases == 1 else 'cases'} of {shown(rubric.name)} in "
            f"{shown(where_of(channel))} written to {shown(str(args.out))}: fill in human_pass"
            f"{', human_' + shown(rubric.headline.tag) if rubric.headline.tag else ''} and note, then "
            f"`judgebot labels import {shown(str(args.out))}`"
            + ("" if channel else f" (or `judgebot judge {shown(str(args.out))} --rubric {shown(rubric.name)}`)")
            + " closes the cases it labels.")
    if written.pairs_left_out:
        said += (f" {written.pairs_left_out:,} {'pair is' if written.pairs_left_out == 1 else 'pairs are'} left out: "
                 "`judgebot review label` asks which answer is better.")
    ctx.console.print(said, highlight=False)
    return EXIT_OK


async def label(ctx: Context) -> int:
    """`judgebot review label`: the next case of the queue for the person at the keyboard, its texts and (unless the
    channel reviews blind) the judge's verdict; their pass/fail, tag and note saved as the label Slack's review card
    saves, until the queue has none for them or they stop (end of input, q, or Ctrl-C)."""
    from bot.cli.views.review import saved_line, show_case
    from bot.store import ANY_TEAM, release_case, skip_case, waiting_for
    from bot.trust.labeling import label_case
    from bot.trust.review_queue import next_case

    settled()
    args, channel = ctx.args, ctx.args.channel
    if args.json or args.nudge or args.out is not None:
        raise UsageError("`review label` takes labels from the keyboard: --json, --nudge and --out go with `review`")
    user = labeler(args.labeler)
    team = ANY_TEAM if channel else None
    where, console = where_of(channel), ctx.console
    labeled, offered, rubrics = 0, None, set()
    try:
        while True:
            offered = next_case(ctx.store, team_id=team, channel_id=channel, user_id=user,
                                rubric_of=lambda made: ctx.rubrics.exact(made.rubric_name, made.rubric_hash))
            if offered is None:
                break
            waiting = waiting_for(ctx.store, team_id=team, channel_id=channel, user_id=user)
            show_case(console, offered, waiting=max(waiting - 1, 0))
            said = ask_label(console, offered)
            if said is None:
                skip_case(ctx.store, case_id=offered.case.id, user_id=user)
                console.print("Skipped: the case goes to someone else (and comes back to you tomorrow).",
                              highlight=False)
                continue
            human, note, pick = said
            judgment = offered.judgment
            saved, _ = label_case(ctx.store, judgment, offered.rubric, human, user_id=user, note=note)
            offered, labeled = None, labeled + 1
            rubrics.add(judgment.rubric_name)
            console.print(saved_line(judgment, passed=saved.passed, tag=saved.tag, pick=pick), highlight=False)
    except (EOFError, KeyboardInterrupt) as stop:
        if offered is not None:
            release_case(ctx.store, case_id=offered.case.id, user_id=user)
        console.print()
        console.print(f"Stopped: {labeled:,} {'case' if labeled == 1 else 'cases'} labeled; the case shown was not "
                      "labeled and stays in the queue.", highlight=False)
        return EXIT_INTERRUPTED if isinstance(stop, KeyboardInterrupt) else EXIT_OK
    console.print(f"No case of {shown(where)} waits for your label. {labeled:,} "
                  f"{'case' if labeled == 1 else 'cases'} labeled" + (
                      f"; `judgebot calibration --rubric {shown(min(rubrics))}` counts them." if labeled else "."),
                  highlight=False)
    return EXIT_OK


PASS_WORDS, FAIL_WORDS = ("p", "pass", "y", "yes"), ("f", "fail", "n", "no")
SKIP_WORDS, QUIT_WORDS = ("s", "skip"), ("q", "quit")


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once while a prompt waits (the event loop's handler would only cancel the
    command once it next awaits, which a prompt never does)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def ask(console: Console, prompt: str) -> str:
    """One line from the keyboard (EOFError at the end of input, KeyboardInterrupt at Ctrl-C); q stops."""
    with interruptible():
        said = console.input(prompt).strip()
    if said.lower() in QUIT_WORDS:
        raise EOFError
    return said


def ask_label(console: Console, offered: Offered) -> tuple[HumanValues, str | None, str | None] | None:
    """The person's label of the case: (their values and pass/fail, their note, a pair's pick), or None to skip."""
    from bot.trust.labels import HumanValues, tag_order

    judgment, rubric = offered.judgment, offered.rubric
    if judgment.answer_b is not None:  # a pair: which answer is better
        while True:
            said = ask(console, "Which answer is better? [bold]a[/], [bold]b[/], [bold]tie[/] (s skips, q stops): ")
            if said.lower() in SKIP_WORDS:
                return None
            if said.lower() in ("a", "b", "tie"):
                pick = said.upper() if said.lower() != "tie" else "tie"
                return HumanValues(values={"winner": pick}), None, pick
            console.print("Please answer a, b or tie (s skips the case, q stops).", highlight=False)
    while True:
        said = ask(console, "Pass or fail? [bold]p[/]/[bold]f[/] (s skips, q stops): ").lower()
        if said in SKIP_WORDS:
            return None
        if said in PASS_WORDS or said in FAIL_WORDS:
            passed = said in PASS_WORDS
            break
        console.print("Please answer p (pass) or f (fail); s skips the case, q stops.", highlight=False)
    values = {}
    if (tag_path := rubric.headline.tag) and (tags := tag_order(rubric)):
        by_word = {tag.lower(): tag for tag in tags} | {str(number): tag for number, tag in enumerate(tags, 1)}
        listed = ", ".join(f"{number} {shown(tag)}" for number, tag in enumerate(tags, 1))
        while True:
            said = ask(console, f"{shown(tag_path)}? {listed} (empty: not said): ")
            if not said or said.lower() in by_word:
                break
            console.print(f"Please give one of {', '.join(shown(tag) for tag in tags)}, its number, or nothing.",
                          highlight=False)
        if said:
            values[tag_path] = by_word[said.lower()]
    note = ask(console, "Note (optional, Enter to save): ")
    return HumanValues(values=values, passed=passed), note[:NOTE_LENGTH] or None, None


def terminal_user() -> str | None:
    """The login name of the person at this terminal (who a file judged here labels as), None when there is none."""
    try:
        return getpass.getuser()[:LABELER_LENGTH]
    except (KeyError, OSError):  # no name for this uid, as in some containers
        return None


def labeler(named: str | None) -> str:
    """Who labels at this terminal: --as, else the login name (as a file judged here labels), else "terminal"."""
    name = (named or "").strip()
    if len(name) > LABELER_LENGTH:
        raise UsageError(f"--as {name[:40]}: a name of at most {LABELER_LENGTH} characters")
    return name or terminal_user() or "terminal"
