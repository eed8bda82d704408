"""Block Kit of `/judge calibration`: how far the judge agrees with people's labels, per rubric, in one channel."""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.models.blocks import Block

from bot.figures import MISSING
from bot.rubric import RubricSet
from bot.slack.text import code_block, escape
from bot.slack.views.blocks import listing, message, notice, section, size
from bot.slack.views.size_limits import MESSAGE_CHARS, MODEL_ROOM, SECTION_LIMIT, TABLE_CELLS
from bot.slack.views.table_block import NOTE_ROOM, Column, table, text, untrusted
from bot.trust import calibration_texts
from bot.trust.calibration import Agreement, Calibration, Confusion
from bot.trust.report import RubricTrust
from bot.trust.review_queue import random_share_text
from bot.trust.stats.kappa import noted

WEEKS_SHOWN = 8
TABLE_ROOM = SECTION_LIMIT - 300  # the table's code block, leaving room for its heading and a note of rows left out
# A backtick in a class name could end the table's code block early; a look-alike cannot. Line ends and tabs
# would break the table's rows and columns.
BACKTICK, LOOK_ALIKE = "`", "\u02cb"
LAYOUT = re.compile(r"[\t\r\n\v\f\u2028\u2029]")

GAPS_HEADING = "*Scores, the judge against people*"
HOW_TO_LABEL = (
    "The judge is measured against what people say of its verdicts here: *Correct it* on a judgment's card says "
    "what the verdict should have been, *Agree* and *Disagree* say whether it was right, and a CSV shared with "
    "`human_pass` or `human_<field>` columns (such as `human_correctness`) labels its rows."
)


def period_text(days: int | None) -> str:
    """Such as "the last 30 days" or "all time"."""
    return f"the last {days} days" if days else "all time"


def empty_message(channel_id: str, rubric_name: str | None, days: int | None) -> dict[str, Any]:
    """No labels to measure the judge against: how to get some."""
    scope = f" of `{escape(rubric_name)}`" if rubric_name else ""
    return notice(f"No labels{scope} in <#{channel_id}> over {period_text(days)}. {HOW_TO_LABEL}")


def safe_class(name: str) -> str:
    """A class name that can sit inside a code block without ending it or breaking the table's lines."""
    return LAYOUT.sub(" ", name.replace(BACKTICK, LOOK_ALIKE))


CONFUSION_HEADING = "*The judge's tag (rows) against people's (columns)*"
CLASSES_SHOWN = TABLE_CELLS - 2  # people's tags as columns: the corner and the totals take two of a row's cells


def confusion_table(confusion: Confusion, *, room: int, where: str) -> list[Block]:
    """The judge's tag against people's as a table with row and column totals, cut to Slack's limits (`room`
    characters among them), and a line saying which of the tags were left out and `where` all of them are."""
    columns = confusion.classes[:CLASSES_SHOWN]
    rows = [[untrusted(name, MODEL_ROOM), *(text(str(count)) for count in counts[:len(columns)]), text(str(total))]
            for name, counts, total in zip(confusion.classes, confusion.counts, confusion.row_totals())]
    totals = [text("total"), *(text(str(count)) for count in confusion.column_totals()[:len(columns)]),
              text(str(confusion.total))]
    found = table([Column("judge \\ people"), *(Column(name, right=True) for name in columns),
                   Column("total", right=True)], rows, room=room - size([section(CONFUSION_HEADING)]), last=totals)
    found.columns_left = len(confusion.classes) - len(columns)
    more = f"_{{n}} more of the judge's tags (rows) not shown: {where}_"
    return [section(CONFUSION_HEADING), *found.blocks(rows=more, columns=f"_{{n}} more of people's tags (columns) "
                                                                      f"not shown: {where}_")]


GAP_COLUMNS = [Column("Criterion"), Column("Labels", right=True), Column("Judge − people", right=True),
               Column("Mean absolute difference", right=True), Column("Weighted kappa", wrap=True)]


def gaps_table(figures: Calibration, *, room: int, where: str) -> list[Block]:
    """Per numeric criterion, as a table: labels, how much higher (+) or lower (-) the judge scores on average, the
    mean absolute difference, and an ordinal scale's weighted kappa."""
    rows = [[untrusted(name, MODEL_ROOM), text(f"{gap.n:,}"), text(f"{round(gap.mean_signed, 2) + 0.0:+.2f}"),
             text(f"{gap.mean_abs:.2f}"), text(gap.kappa.text() if gap.kappa is not None else MISSING)]
            for name, gap in figures.gaps.items()]
    heading = section(GAPS_HEADING)
    found = table(GAP_COLUMNS, rows, room=room - size([heading]))
    return [heading, *found.blocks(rows=f"_{{n}} more criteria not shown: {where}_")]


def confusion_text(confusion: Confusion) -> str:
    """The judge's tag against people's as a monospace table in a code block, cut to fit one section."""
    safe = Confusion(classes=[safe_class(name) for name in confusion.classes], counts=confusion.counts)
    lines = [escape(line) for line in safe.table()]
    kept: list[str] = []
    for line in lines:
        if sum(len(shown) + 1 for shown in kept) + len(line) > TABLE_ROOM:
            break
        kept.append(line)
    note = f"\n_{len(lines) - len(kept)} more row(s) of the table do not fit._" if len(kept) < len(lines) else ""
    return f"{CONFUSION_HEADING}\n" + code_block("\n".join(kept)) + note


def figures_text(report: RubricTrust, rubrics: RubricSet) -> str:
    """The headline figures of one rubric: labels, agreement with its interval, pass rates, kappas, and what to
    doubt."""
    figures = report.figures
    rubric = rubrics.find(report.rubric_name)
    title = f" · {escape(rubric.title)}" if rubric is not None else ""
    cases = f" of {figures.pass_cases} cases" if figures.clustered else ""
    lines = [f"*`{escape(report.rubric_name)}`*{title} · *{figures.n} label(s){cases}*", agreement_text(figures),
             pass_rates_text(figures), kappas_text(figures)]
    if report.random is not None:  # the cases nobody chose: the estimate to report
        lines.insert(2, f"*on cases picked at random for review* {escape(random_share_text(report.random, figures.agreement))}")
    lines += [f":warning: {escape(str(doubt))}" for doubt in report.doubts]
    return "\n".join(lines)


def agreement_text(figures: Agreement) -> str:
    """Agreement on pass/fail with its 95 % interval (Wilson's, or a bootstrap over cases), or why there is none."""
    return f"*agreement on pass/fail* {escape(calibration_texts.agreement_text(figures))}"


def pass_rates_text(figures: Agreement) -> str:
    """How often the judge and people pass, and McNemar's test of the difference."""
    return f"*pass rates* {escape(calibration_texts.pass_rates_text(figures))}"


def kappas_text(figures: Calibration) -> str:
    """Cohen's kappa on pass/fail, and on the tag when labels give one, each with its interval."""
    text = f"*Cohen's kappa on pass/fail* {escape(figures.kappa_pass.text())}"
    if figures.tag_n:
        on_tag = calibration_texts.over_labels(figures.kappa_tag.text(note=False), figures.tag_n, figures.kappa_tag.cases)
        text += f"\n*on the tag* {escape(on_tag)}"
    return text


def gaps_text(figures: Calibration) -> str:
    """Per numeric criterion: how much higher or lower the judge scores, the mean absolute difference, and an
    ordinal scale's weighted kappa."""
    return "\n".join(f"`{escape(name)}`: {escape(calibration_texts.gap_text(gap))}" for name, gap in figures.gaps.items())


def details_text(figures: Calibration, *, gaps: bool = True) -> str:
    """Score differences per numeric criterion (unless a table shows them), and labels per week (the last few)."""
    lines = []
    if figures.gaps and gaps:
        lines.append(f"{GAPS_HEADING}\n" + gaps_text(figures))
    weeks = [f"{week} {n}" + (f" ({noted(f'{agreement:.0%}', cases)})" if agreement is not None else "")
             for week, n, cases, agreement in figures.by_week[-WEEKS_SHOWN:]]
    if weeks:
        lines.append("labels per week (agreement): " + " · ".join(weeks))
    return "\n".join(lines)


def rubric_blocks(report: RubricTrust, rubrics: RubricSet, *, room: int | None = None,
                  where: str = "") -> list[Block]:
    """One rubric's sections: figures, the confusion matrix, differences and weeks. With `room` (characters), the
    message's one table is this rubric's: its confusion matrix, or without one its scores per criterion."""
    figures = report.figures
    blocks: list[Block] = [section(figures_text(report, rubrics))]
    in_table = room is not None and figures.confusion is None and bool(figures.gaps)
    details = details_text(figures, gaps=not in_table)
    if room is not None and (figures.confusion is not None or in_table):
        left = room - size([*blocks, *([section(details)] if details else [])])
        blocks.extend(confusion_table(figures.confusion, room=left, where=where) if figures.confusion is not None
                      else gaps_table(figures, room=left, where=where))
    elif figures.confusion is not None:
        blocks.append(section(confusion_text(figures.confusion)))
    if details:
        blocks.append(section(details))
    return blocks


def calibration_message(reports: list[RubricTrust], rubrics: RubricSet, channel_id: str, *, days: int | None,
                        rubric_name: str | None = None) -> dict[str, Any]:
    """The answer to `/judge calibration`: per rubric with labels, the judge against people in this channel."""
    labeled = [report for report in reports if report.figures.n]
    if not labeled:
        return empty_message(channel_id, rubric_name, days)
    head = [section(f"*How far the judge agrees with people in <#{channel_id}>, {period_text(days)}*")]
    # One table in a message: the first rubric's (its sections come first, so its table has room to fit).
    first, *others = labeled
    where = f"`judgebot calibration --rubric {escape(first.rubric_name)} --channel {channel_id}` shows them all"
    entries = [*rubric_blocks(first, rubrics, room=MESSAGE_CHARS - size(head) - NOTE_ROOM, where=where),
               *(block for report in others for block in rubric_blocks(report, rubrics))]
    names = ", ".join(escape(report.rubric_name) for report in labeled)
    return message(listing(head, entries, more="_{n} more section(s); name one rubric to see it whole._"),
                   f"judgebot calibration, {period_text(days)}: {names}")
