"""Block Kit of a weekly digest: a table of per model and rubric figures with their change, regressions, worst
examples."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.digest import Digest, Example, JudgeChange, Line, signed
from bot.figures import MISSING, number, percent, plural
from bot.rubric import RubricSet, leaves
from bot.slack.commands.words import DAY_NAMES
from bot.slack.text import date, escape, permalink, shown
from bot.slack.views.blocks import context, message, notice, section, size, text_sections, warning_blocks
from bot.slack.views.budget import spend_text
from bot.slack.views.mixed_verdicts import mixed_blocks
from bot.slack.views.size_limits import HEADER_LIMIT, MESSAGE_CHARS, MODEL_ROOM
from bot.slack.views.table_block import NOTE_ROOM, Cell, Column, Table, table, untrusted
from bot.slack.views.table_block import text as cell
from bot.slack.views.view_links import trend_link
from bot.store import DigestSubscription
from bot.trust.calibration import Agreement
from bot.trust.calibration_texts import agreement_text
from bot.trust.calibration_texts import labels_text as week_text
from bot.trust.pairwise_texts import win_rate_text
from bot.trust.report import WeekTrust, people_agreement
from bot.trust.review_queue import queue_text

QUESTION_ROOM = 120  # characters of a question quoted in a list
CHANGES_SHOWN = 10  # judge changes listed; a rubric edited all week could otherwise overflow the section
TAGS_SHOWN = 8  # tag rates on a line (a rubric's tag may be free text)
TRUST_SHOWN = 10  # rubrics in the section on how far to trust the judge
TRUST_HEADING = "*How far to trust the judge this week* (people's labels of the judgments made here)"


def schedule_text(sub: DigestSubscription) -> str:
    """Such as "every Monday at 09:00 (Europe/Berlin)"."""
    return f"every {DAY_NAMES[sub.weekday].title()} at {sub.hour:02d}:{sub.minute:02d} ({sub.timezone})"


def tag_values(rubrics: RubricSet, rubric_name: str) -> list[str]:
    """The values a rubric's tag can take, in the rubric's order (empty if the rubric is not loaded)."""
    rubric = rubrics.find(rubric_name)
    if rubric is None or not rubric.headline.tag:
        return []
    spec = dict(leaves(rubric.output)).get(rubric.headline.tag)
    return list(spec.values or []) if spec is not None else []


def model_of(name: str | None) -> str:
    return f"*{shown(name, MODEL_ROOM)[0]}*" if name else "_model not named_"


LINE_COLUMNS = {"model": Column("Model"), "rubric": Column("Rubric"), "cases": Column("Cases", right=True),
                "mean": Column("Mean /100", right=True), "change": Column("▲▼ mean", right=True),
                "pass": Column("Pass", right=True), "pass_change": Column("▲▼ pass", right=True),
                "unsure": Column("Unsure", right=True), "errors": Column("Judge errors", right=True),
                "tags": Column("Tags", wrap=True), "people": Column("People agree with the judge", wrap=True)}


def tags_text(line: Line, rubrics: RubricSet) -> str:
    """The share of each tag among the scored rows, in the rubric's order, then the others by count (untrusted)."""
    now = line.now
    if not now.scored or not (now.tags or tag_values(rubrics, now.rubric_name)):
        return ""
    names = tag_values(rubrics, now.rubric_name)
    names += sorted(set(now.tags) - set(names), key=lambda name: -now.tags[name])
    return " · ".join(f"{name.lower()[:40]} {now.tags.get(name, 0) / now.scored:.0%}" for name in names[:TAGS_SHOWN])


def line_row(line: Line, rubrics: RubricSet) -> dict[str, Cell]:
    """One model on one rubric, by column: count, mean, pass rate, their change, unsure and judge error rates, tag
    rates, and how far people agree with the judge (every label, correction and vote on its rows)."""
    now = line.now
    agreement = people_agreement(now.said)
    error = line.error_rate
    tags = tags_text(line, rubrics)
    return {"model": untrusted(now.model_name, MODEL_ROOM) if now.model_name else cell("model not named"),
            "rubric": untrusted(now.rubric_name, MODEL_ROOM), "cases": cell(f"{now.cases:,}"),
            "mean": cell(number(now.mean_headline, 1)),
            "change": cell("new this week" if line.before is None else signed(line.change) or MISSING),
            "pass": cell(percent(now.pass_rate)), "pass_change": cell(signed(line.pass_change, " pts") or MISSING),
            "unsure": cell(percent(now.unsure_rate)),
            "errors": cell(MISSING if error is None else f"{error:.0%}" + (f" ({now.errors})" if now.errors else "")),
            "tags": untrusted(tags) if tags else cell(MISSING),
            "people": cell(agreement_text(agreement) if agreement.agreement is not None else MISSING)}


def lines_table(lines: list[Line], rubrics: RubricSet, *, room: int) -> Table:
    """The week's figures per model and rubric as a table: the columns no row has a figure in are left out."""
    rows = [line_row(line, rubrics) for line in lines]
    needed = {"unsure": any(line.now.unsure_rate is not None for line in lines),
              "tags": any(row["tags"]["type"] != "raw_text" for row in rows),
              "people": any(row["people"]["text"] != MISSING for row in rows)}
    names = [name for name in LINE_COLUMNS if needed.get(name, True)]
    return table([LINE_COLUMNS[name] for name in names], [[row[name] for name in names] for row in rows], room=room)


def link_to(example: Example, team_url: str | None) -> str:
    """A link to the judgment's card, or to the thread of the file it came from; else its number."""
    channel = example.channel_id or ""
    if example.message_ts:
        url = permalink(team_url, channel, example.message_ts, example.thread_ts)
        label = "card"
    elif example.thread_ts:
        url = permalink(team_url, channel, example.thread_ts)
        label = f"row {example.row_number}" if example.row_number is not None else "thread"
    else:
        url, label = None, ""
    return f"<{url}|{label}> (#{example.judgment_id})" if url else f"#{example.judgment_id}"


def _quote(text: str) -> str:
    return f"“{shown(' '.join(text.split()), QUESTION_ROOM)[0]}”"


def regressions_text(digest: Digest, team_url: str | None) -> str:
    rows = [f"• {model_of(r.example.model_name)} · `{escape(r.example.rubric_name)}` · {r.before:.0f} → "
            f"{r.after:.0f}: {_quote(r.example.question)} · {link_to(r.example, team_url)}" for r in digest.regressions]
    return "*Biggest regressions* (the same question scored lower than last week)\n" + "\n".join(rows)


def worst_text(digest: Digest, team_url: str | None) -> str:
    rows = [f"• *{e.headline:.0f}*/100 · {model_of(e.model_name)} · `{escape(e.rubric_name)}`: {_quote(e.question)} · "
            f"{link_to(e, team_url)}" for e in digest.worst]
    return "*Lowest scores*\n" + "\n".join(rows)


def changes_text(changes: list[JudgeChange]) -> str:
    rows = [f"• {escape(c.what)}: {escape(c.before)} → {escape(c.after)}, from {date(c.since)}"
            for c in changes[:CHANGES_SHOWN]]
    if len(changes) > CHANGES_SHOWN:
        rows.append(f"• …and {len(changes) - CHANGES_SHOWN} more changes")
    return (":warning: *The judge changed during the week*, so part of a change in scores may come from the judge, "
            "not from the models:\n" + "\n".join(rows))


def labels_text(figures: Agreement) -> str:
    """Agreement, pass rates and kappa on pass/fail with n (bot.trust.calibration_texts.labels_text), made safe."""
    return escape(week_text(figures))


def trust_lines(trust: list[WeekTrust]) -> list[str]:
    """Per rubric: this week's labels against the 4 weeks before, and the warnings they earn."""
    lines = []
    for found in trust[:TRUST_SHOWN]:
        lines.append(f"• `{escape(found.rubric_name)}`\n   this week: {labels_text(found.week)}\n   the 4 weeks "
                     f"before: {labels_text(found.before)}")
        lines += [f"   :warning: {escape(str(doubt))}" for doubt in found.doubts]
    if len(trust) > TRUST_SHOWN:
        lines.append(f"• …and {len(trust) - TRUST_SHOWN} more rubrics: `/judge calibration <rubric>` shows each")
    return lines


def title_of(digest: Digest, *, weekly: bool) -> str:
    return (f"Weekly digest · {digest.period.label} ({digest.period.week})" if weekly
            else f"Digest of the last 7 days · {digest.period.label}")


def digest_message(digest: Digest, rubrics: RubricSet, team_url: str | None, *, weekly: bool = True,
                   chart: bool = True, view_url: str | None = None) -> dict[str, Any]:
    """The digest as a channel message; a quiet period is one line. With `view_url` (VIEW_URL), a link to the
    channel's weekly trend in the web view."""
    title = title_of(digest, weekly=weekly)
    channel = f"<#{digest.channel_id}>" if digest.channel_id else "the terminal"
    if digest.quiet:
        quiet = f"*{title}*: no judgments in {channel} over these 7 days."
        return message([section(quiet), *warning_blocks(digest.warnings)], quiet) if digest.warnings else notice(quiet)
    models = {line.now.model_name for line in digest.lines}
    rubric_names = {line.now.rubric_name for line in digest.lines}
    error_rate = digest.errors / digest.cases if digest.cases else 0
    head: list[Block] = [
        HeaderBlock(text=title[:HEADER_LIMIT]),
        *([section(f"*{digest.cases:,} {plural(digest.cases, 'case')}* in {channel} · {len(models)} model(s) "
                   f"under test · {len(rubric_names)} rubric(s) · judge errors {error_rate:.1%}\n"
                   "▲ ▼ compare with the 7 days before.")] if digest.lines else []),
        *warning_blocks(digest.warnings),
    ]
    tail: list[Block] = mixed_blocks([line.now for line in digest.lines])
    if digest.pairwise:
        tail.append(section("*Pairwise win rates these 7 days* (each pair judged in both orders, ties split)\n"
                            + "\n".join(f"• {escape(win_rate_text(match))}" for match in digest.pairwise[:10])))
    if digest.spend is not None and digest.spend.by_judge:
        tail.append(section(f"*Spent on judging these 7 days* {spend_text(digest.spend)}"))
    if digest.changes:
        tail.append(section(changes_text(digest.changes)))
    if digest.trust:
        tail.extend(text_sections(trust_lines(digest.trust), TRUST_HEADING))
    if digest.queue is not None:
        tail.append(section(f":mag: {queue_text(digest.queue)} (`/judge review` asks for yours)"))
    if digest.alphas:
        tail.append(section("*How far the judges agree among themselves* (Krippendorff's alpha, rows judged several "
                            "times)\n" + "\n".join(f"• `{escape(name)}` {escape(alphas.text(tagged))}"
                                                    for name, alphas, tagged in digest.alphas)))
    if digest.regressions:
        tail.append(section(regressions_text(digest, team_url)))
    if digest.worst:
        tail.append(section(worst_text(digest, team_url)))
    tail.append(context(("" if not digest.lines else
                         ":chart_with_upwards_trend: the trend of the last 8 weeks is in the thread" if chart else
                         "the trend chart comes with the posted digest"),
                        "only judgments made in this channel", "`/judge digest` shows the schedule",
                        trend_link(view_url, digest.channel_id) if digest.channel_id else ""))
    found = lines_table(digest.lines, rubrics, room=MESSAGE_CHARS - size([*head, *tail]) - NOTE_ROOM)
    more = ("_{n} more model and rubric pair(s) not shown: `judgebot digest"
            + (f" --channel {digest.channel_id}" if digest.channel_id else "") + "` in a terminal lists them all._")
    return message([*head, *found.blocks(rows=more), *tail], f"judgebot: {title}")
