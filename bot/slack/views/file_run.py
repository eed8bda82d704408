"""Block Kit for a file's run: questions before it starts, the progress message, and the summary card."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.figures import duration, number, percent
from bot.records import RowState, RunState
from bot.rubric import Rubric, RubricSet
from bot.runs import Progress, Summary
from bot.slack.text import clip, escape, plain, shown
from bot.slack.views import calibration
from bot.slack.views.blocks import context, listing, message, section, size, warning_blocks
from bot.slack.views.calibration import confusion_text
from bot.slack.views.size_limits import (
    BUTTON_LIMIT,
    BUTTONS_PER_ROW,
    HEADER_LIMIT,
    MESSAGE_CHARS,
    MODEL_ROOM,
    SECTION_FIELDS,
    SECTION_LIMIT,
)
from bot.slack.views.table_block import NOTE_ROOM, Column, Table, table, untrusted
from bot.slack.views.table_block import text as cell
from bot.slack.views.view_links import run_link
from bot.store import Run
from bot.trust.file_labels import FileLabels
from bot.trust.labels import ambiguity_text, unknown_text
from bot.trust.model_comparison import ModelComparison, summary_text
from bot.trust.review import SentToReview

PICK_RUBRIC, RUN_AGAIN, SKIP_AGAIN, CANCEL_RUN, RESUME_RUN = (
    "judgebot_file_rubric", "judgebot_file_again", "judgebot_file_skip", "judgebot_run_cancel",
    "judgebot_run_resume")
BAR_CELLS = 20
PROBLEMS_SHOWN = 10
PROBLEMS_ROOM = 1500  # characters of the card kept for the first rows not scored, whatever the table of models takes
ACCEPTS = ("I judge CSV and TSV files with a header row naming the columns `question`, `reference` and `answer` "
           "(and optionally `model`). Share one here with the rubric in the message, such as `eth`, or set the "
           "channel's rubric with `/judge default <rubric>`.")


NAME_ROOM = 120  # characters of a file's name (Slack allows long ones)
PROBLEM_ROOM = SECTION_LIMIT - NAME_ROOM - 100  # characters of why a file cannot be judged (it may quote the file)
REASON_ROOM = 1200  # characters of why a run paused (the judge endpoint's words)


def _name(file_name: str) -> str:
    return shown(file_name, NAME_ROOM)[0]


# -- before the run ------------------------------------------------------------------------------------------


def rubric_question(share_id: int, file_name: str, rubrics: RubricSet) -> dict[str, Any]:
    """Which rubric should judge this file? One button per rubric."""
    buttons = [ButtonElement(text=clip(rubric.title, BUTTON_LIMIT)[0], action_id=f"{PICK_RUBRIC}_{rubric.name}",
                             value=f"{share_id}:{rubric.name}") for rubric in rubrics]
    text = (f"Which rubric should judge *{_name(file_name)}*? Next time, name it in the message (such as "
            "`eth`), or set the channel's rubric with `/judge default <rubric>`.")
    rows = [ActionsBlock(elements=buttons[i:i + BUTTONS_PER_ROW]) for i in range(0, len(buttons), BUTTONS_PER_ROW)]
    return message([section(text), *rows[:20]], f"Which rubric should judge {_name(file_name)}?")


def again_question(share_id: int, file_name: str, earlier_run: int | None) -> dict[str, Any]:
    """The same file was judged in this thread already: run it again?"""
    before = f" (run #{earlier_run})" if earlier_run else ""
    text = (f"*{_name(file_name)}* was judged in this thread already{before}. Run it again? Rows judged before "
            "are taken from the history, so they are not billed again.")
    buttons = ActionsBlock(elements=[
        ButtonElement(text="Run again", action_id=RUN_AGAIN, value=str(share_id), style="primary"),
        ButtonElement(text="Don't", action_id=SKIP_AGAIN, value=str(share_id)),
    ])
    return message([section(text), buttons], f"{_name(file_name)} was judged in this thread already. Run it again?")


def answered(text: str) -> dict[str, Any]:
    """A question once answered: what was decided, without its buttons."""
    return message([section(text)], text)


# -- the progress message ------------------------------------------------------------------------------------


def bar(done: int, total: int) -> str:
    """A text progress bar with the percentage."""
    share = done / total if total else 1.0
    filled = round(share * BAR_CELLS)
    return f"`{'█' * filled}{'░' * (BAR_CELLS - filled)}` {share:.0%}"


def _title(run: Run, rubric_title: str) -> str:
    return f"*{_source(run)}* · {escape(rubric_title)} · run #{run.id}"


def _source(run: Run) -> str:
    return _name(run.source_name or "file")


def loading(file_name: str, rubric_title: str) -> dict[str, Any]:
    """The progress message before the rows are saved."""
    text = f":inbox_tray: Reading *{_name(file_name)}* to judge with {escape(rubric_title)}…"
    return message([section(text)], f"Reading {_name(file_name)}…")


def progress(run: Run, rubric_title: str, event: Progress | None, who: str | None, *,
             batch: bool = False) -> dict[str, Any]:
    """The moving progress message: bar, rows done, errors, speed, time left, and Cancel (through the Batch API:
    the rows its batches answered so far, and when the results come)."""
    done, total = (event.done, event.total) if event else (0, run.total_rows)
    parts = [f"{done:,} / {total:,} rows"]
    if batch:
        parts.append("through the Batch API at half price: results within 24 h; the bot keeps waiting through "
                     "restarts")
    elif event is not None:
        parts.append(f"{event.errors:,} error{'s' if event.errors != 1 else ''} or invalid")
        if run.samples > 1 or len(run.judges or []) > 1:
            parts.append(f":warning: {event.unsure:,} unsure (samples split)")
        if event.rate > 0:
            parts.append(f"{event.rate:.1f} rows/s")
        if event.eta is not None and done < total:
            parts.append(f"about {duration(event.eta)} left")
        if event.paced:
            parts.append(escape(event.paced))
    started = f" for <@{who}>" if who else ""
    cancel = ButtonElement(
        text="Cancel", action_id=CANCEL_RUN, value=str(run.id), style="danger",
        confirm=ConfirmObject(title="Cancel this run?", text="The rows graded so far are kept and summarised.",
                              confirm="Cancel the run", deny="Keep going"))
    blocks: list[Block] = [
        section(f":hourglass_flowing_sand: Judging {_title(run, rubric_title)}{started}\n{bar(done, total)}"),
        context(*parts), ActionsBlock(elements=[cancel]),
    ]
    return message(blocks, f"Judging {_source(run)}: {done} / {total} rows")


BATCH_RUN = "judgebot_run_batch"
BACKGROUND_RUN = "judgebot_run_background_"  # + the window: "2h" or "8h"


def paused(run: Run, rubric_title: str, done: int, total: int, reason: str) -> dict[str, Any]:
    """A run stopped by a problem every request would hit (quota, key): Resume once it is fixed, or finish here."""
    why, _ = shown(reason, REASON_ROOM)
    blocks: list[Block] = [
        section(f":double_vertical_bar: Paused {_title(run, rubric_title)} at {done:,} / {total:,} rows.\n{why}\n\n"
                "Fix that, then press *Resume*: the rows already graded are kept. *Finish here* summarises them."),
        ActionsBlock(elements=[
            ButtonElement(text="Resume", action_id=RESUME_RUN, value=str(run.id), style="primary"),
            ButtonElement(text="Finish here", action_id=CANCEL_RUN, value=str(run.id)),
        ]),
    ]
    return message(blocks, f"Paused {_source(run)} at {done} / {total} rows: {why}")


def interrupted(run: Run, rubric_title: str, done: int, total: int) -> dict[str, Any]:
    """The bot stopped mid-run: it goes on from here when it is back."""
    text = (f":double_vertical_bar: {_title(run, rubric_title)}: the bot was stopped at {done:,} / {total:,} rows. "
            "Every graded row is saved; the run goes on from here when the bot is back.")
    return message([section(text)], f"Interrupted at {done} / {total} rows")


def finished(run: Run, rubric_title: str, summary: Summary, seconds: float | None, cancelled_by: str | None,
             paced: str | None = None) -> dict[str, Any]:
    """The progress message at the end: done (or cancelled), how long it took (and the judge endpoint's limit that
    set the pace, if one did), where the summary is."""
    done = summary.rows - summary.counts[RowState.MALFORMED] - summary.counts[RowState.PENDING]
    total = summary.rows - summary.counts[RowState.MALFORMED]
    took = f" in {duration(seconds)}" if seconds is not None else ""
    if run.status == RunState.CANCELLED:
        who = f" by <@{cancelled_by}>" if cancelled_by else ""
        head = (f":no_entry_sign: Cancelled{who} at {done:,} / {total:,} rows: {_title(run, rubric_title)}. The "
                f"{summary.scored:,} graded rows are kept and summarised below.")
    else:
        head = f":white_check_mark: Judged {_title(run, rubric_title)}: {done:,} rows{took}. The summary is below."
    blocks: list[Block] = [section(f"{head}\n{bar(done, total)}")]
    if paced:
        blocks.append(context(f"The judge endpoint's limits set the pace: {escape(paced)}."))
    return message(blocks, f"Finished {_source(run)}")


def failed(file_name: str, problem: str) -> dict[str, Any]:
    """A file that cannot be judged: why (plain text, which may quote the file), and what to do."""
    text = f":warning: I cannot judge *{_name(file_name)}*: {shown(problem, PROBLEM_ROOM)[0]}"
    return message([section(text)], f"I cannot judge {_name(file_name)}")


# -- the summary card ----------------------------------------------------------------------------------------


MODEL_COLUMNS = [Column("Model under test"), Column("Rows", right=True), Column("Mean /100", right=True),
                 Column("Pass", right=True), Column("Judge errors", right=True)]


def models_table(summary: Summary, *, room: int) -> Table:
    """Each model under test, best mean first: rows, mean headline, pass rate and judge errors, as a table."""
    rows = [[untrusted(name, MODEL_ROOM), cell(f"{figures.rows:,}"), cell(number(figures.mean_headline, 1)),
             cell(percent(figures.pass_rate)), cell(f"{figures.errors:,}")]
            for name, figures in sorted(summary.models.items(), key=lambda item: -(item[1].mean_headline or 0))]
    return table(MODEL_COLUMNS, rows, room=room)


def _samples(summary: Summary, tagged: bool) -> str:
    """How far the samples of each row agreed: how many were taken, how many failed, the rows they split on, and
    Krippendorff's alpha among the judges (or samples)."""
    failed = f" ({summary.failed_samples:,} not scored)" if summary.failed_samples else ""
    text = f"*Samples* {sum(summary.samples.values()):,}{failed} · *Unsure rows* {summary.unsure:,}"
    if summary.unsure:
        rows = ", ".join(str(row) for row in summary.unsure_rows)
        more = f" and {summary.unsure - len(summary.unsure_rows):,} more" if summary.unsure > len(summary.unsure_rows) else ""
        text += f" (the samples split or spread widely): rows {rows}{more}; the unsure column of the results marks them"
    return text + f"\n*Krippendorff's alpha* {escape(summary.alpha_text(tagged))}"


def _labels(labels: FileLabels) -> list[Block]:
    """The judge against the labels the file's human_ columns hold."""
    blocks: list[Block] = []
    figures = labels.calibration
    if figures is not None and figures.n:
        lines = [f"*The judge against the file's labels* ({figures.n:,} labels)", calibration.agreement_text(figures),
                 calibration.pass_rates_text(figures), calibration.kappas_text(figures)]
        if figures.gaps:
            lines.append(calibration.gaps_text(figures))
        blocks.append(section(clip("\n".join(lines), SECTION_LIMIT)[0]))
        if figures.confusion is not None:  # cut between whole rows, never inside its code block
            blocks.append(section(confusion_text(figures.confusion)))
    if notes := label_notes(labels):
        blocks.append(context(*notes))
    return blocks


LABEL_NOTES = 3  # of each kind: columns naming no field, columns not read, rows whose label was not read


def label_notes(labels: FileLabels) -> list[str]:
    """What the file's label columns left out, within a context block's limits (10 elements of 3,000 characters):
    a few of each kind, names cut short, and how many more."""
    def more(count: int, what: str) -> list[str]:
        return [f"and {count} more {what}"] if count > 0 else []

    columns = [shown(unknown_text(header[:80], (labels.meant.get(header) or "")[:80] or None), 400)[0]
               for header in labels.unknown]
    columns += [shown(ambiguity_text(header[:80], fields), 600)[0] for header, fields in labels.ambiguous]
    notes = columns[:LABEL_NOTES]
    notes += more(len(columns) - LABEL_NOTES, "columns that name no field" + " or several" * bool(labels.ambiguous))
    notes += [f"column {shown(header, 80)[0]} names the same label as {shown(read, 80)[0]} (read); it was not read"
              for header, read in labels.repeated[:1]]
    notes += more(len(labels.repeated) - 1, "columns that repeat a label")
    notes += [f"row {row}: label not read: {shown(problem, 200)[0]}" for row, problem in labels.problems[:LABEL_NOTES]]
    notes += more(labels.unreadable - min(len(labels.problems), LABEL_NOTES), "rows whose label was not read")
    return notes


def summary_card(run: Run, rubric: Rubric, summary: Summary, results_name: str,
                 labels: FileLabels | None = None, review: SentToReview | None = None,
                 models: tuple[str, str, ModelComparison] | None = None, warnings: Sequence[str] = (), *,
                 view_url: str | None = None) -> dict[str, Any]:
    """The end of a run: counts, pass rate, criteria, tags, models, samples and unsure rows, the judge against the
    file's labels, the rows sent to review, lowest rows, problems, tokens and cost; `warnings` (such as its judges'
    coming shutdown) under its header; with `view_url` (VIEW_URL), a link to the run in the web view."""
    malformed, pending = summary.counts[RowState.MALFORMED], summary.counts[RowState.PENDING]
    invalid = summary.counts[RowState.INVALID]
    counts = [f"*Rows*\n{summary.rows:,}", f"*Scored*\n{summary.scored:,}",
              f"*Judge errors*\n{summary.counts[RowState.ERROR]:,}", f"*Malformed*\n{malformed:,}"]
    if invalid:
        counts.append(f"*Invalid replies*\n{invalid:,}")
    if pending:
        counts.append(f"*Not judged*\n{pending:,}")
    if summary.content_free:
        counts.append(f"*Content-free answers*\n{summary.content_free:,} failed, not sent to the judge")
    rate = summary.pass_rate
    counts.append(f"*Pass rate*\n{percent(rate)}" + (f" ({summary.passed:,}/{summary.scored:,})" if rate is not None
                                                       else ""))
    means = [f"*{escape(c.replace('_', ' '))}*\n{number(summary.mean(c))}" for c in summary.criteria]
    head: list[Block] = [
        HeaderBlock(text=clip(f"Results · {plain(run.source_name or 'file', 80)} · {rubric.title}", HEADER_LIMIT)[0]),
        *warning_blocks(warnings),
        SectionBlock(fields=[MarkdownTextObject(text=f) for f in counts[:SECTION_FIELDS]]),
    ]
    if means:
        head.append(SectionBlock(text=MarkdownTextObject(text="*Mean of each criterion*"),
                                 fields=[MarkdownTextObject(text=f) for f in means[:SECTION_FIELDS]]))
    for path, tags in summary.tags.items():
        shares = " · ".join(f"{escape(tag)} {n:,} ({n / max(summary.scored, 1):.0%})" for tag, n in tags.most_common())
        head.append(section(f"*{escape(path.replace('_', ' '))}*\n{shares}"))
    per_model = len(summary.models) > 1 or next(iter(summary.models), "(no model)") != "(no model)"
    at = len(head)  # where the table of the models goes, once the rest of the card says how much room it leaves
    if summary.samples:
        head.append(section(_samples(summary, bool(rubric.headline.tag))))
    if labels is not None and labels.any:
        head.extend(_labels(labels))
    if models is not None:
        head.append(section(f"*Is {escape(models[1])} better than {escape(models[0])}?*\n"
                            f"{escape(summary_text(*models))}"))
    if review is not None and review.total:
        head.append(section(f":mag: {review.text()}: `/judge review` asks for your label, one case at a time."))
    elif review is not None and review.text():
        head.append(section(f":mag: {review.text()}."))
    if summary.worst:
        low = [f"• row {row}: {score:.0f}/100 · {shown(question, 150)[0]}" for score, row, question in summary.worst]
        head.append(section("*Lowest-scoring rows*\n" + "\n".join(low)))
    reused = f"{summary.from_history:,} rows reused from the history (not billed)" if summary.from_history else ""
    guess = summary.estimate_text()
    thought = f", {summary.tokens_reasoning:,} of them reasoning" if summary.tokens_reasoning else ""
    effort = f" · effort {escape(effort_text)}" if (effort_text := summary.effort_text()) else ""
    footer = context(run_link(view_url, run.id), f"{summary.tokens_in + summary.tokens_out:,} tokens "
                     f"({summary.tokens_in:,} in · {summary.tokens_out:,} out{thought})", escape(summary.cost_text()),
                     escape(guess) if guess else "", summary.identical_text() or "", reused,
                     f"judge `{escape(run.judge_model)}`{effort}",
                     f"{escape(rubric.name)} {escape(rubric.version)}", f"every row is in {escape(results_name)}",
                     f"columns {shown(summary.column_text, 500)[0]}" if summary.columns else "")
    problems = [section(f"• row {row} ({status}): {shown(reason, 400)[0]}")
                for row, status, reason in summary.problems[:PROBLEMS_SHOWN]]
    unscored = summary.rows - summary.scored - pending
    if problems:
        head.append(section(f"*Rows not scored* ({unscored:,})"))
    if per_model:
        found = models_table(summary, room=MESSAGE_CHARS - size([*head, footer]) - NOTE_ROOM - PROBLEMS_ROOM)
        head[at:at] = [section("*Per model under test*"), *found.blocks(
            rows=f"_{{n}} more models not shown: the model column of {escape(results_name)} has every row, and "
                 "`judgebot stats` in a terminal sums them up_")]
    # The footer is counted among the blocks the rows not scored must leave room for, and kept for the end.
    blocks = listing([*head, footer], problems, more="{n} more; the status and error columns of the results file "
                                                     "list them")
    del blocks[len(head)]
    if unscored > len(problems) and problems and len(problems) == len(summary.problems[:PROBLEMS_SHOWN]):
        blocks.append(context(f"{unscored - len(problems):,} more rows not scored: see the status and error columns "
                              "of the results file"))
    blocks.append(footer)
    fallback = (f"Results of {_source(run)}: {summary.scored} of {summary.rows} rows scored, pass rate "
                f"{percent(rate)}")
    return message(blocks, fallback)
