"""The calibration commands: how far to trust the judge from people's labels, the labels as a CSV, and a check of
today's judge against them."""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console

from bot import terminal, terminal_calibration
from bot.config import Settings
from bot.errors import UsageError
from bot.run_commands import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE, NO_ENDPOINT, terminal_origin

if TYPE_CHECKING:
    from bot.calibration import Calibration, LabeledVerdict
    from bot.csvio import CsvRow
    from bot.human_labels import HumanValues
    from bot.jury import Panel
    from bot.rubric import Rubric, RubricSet
    from bot.store import Judgment, Store

EXIT_BELOW = EXIT_UNSCORED  # a check below --min-agreement fails like a run with rows left unscored
DAYS = re.compile(r"^(\d+)d$")
CHARS_PER_TOKEN = 4  # the usual rough figure for English text; an estimate, not a bill
TOKENS_OUT_PER_ROW = 300
TEXT_COLUMNS = ["question", "reference", "answer", "model"]
JUDGE_COLUMNS = ["judge_pass", "judge_tag", "judge_model", "rubric_version", "labeled_by", "labeled_at", "judgment_id"]


@dataclass
class LabeledCase:
    """One label or vote in the history, with the judgment it is about and what the person says as field values."""

    judgment: Judgment
    labeled_by: str
    labeled_at: datetime
    human: HumanValues


@dataclass
class CheckCase:
    """A labeled row to judge again: its texts, the person's label, and what the original judge gave, when known."""

    row: CsvRow
    human: HumanValues
    original: tuple[bool | None, str | None, str] | None  # (passed, tag, judge model)


# --- judgebot calibration ---------------------------------------------------------------------------------------


async def calibration_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot calibration [check]`: the judge's figures against every label, or a check of today's judge."""
    if args.action == "check":
        return await check_command(args, settings, rubrics, console)
    if args.labels or args.yes or args.fresh or args.min_agreement is not None:
        raise UsageError("--labels, --min-agreement, --yes and --fresh belong to `judgebot calibration check`")
    from bot.calibration import calibrate
    from bot.runs.file_labels import tag_order
    from bot.store import Store
    from bot.store.labels import labeled_verdicts

    rubric = rubrics.get(args.rubric)
    since = since_of(args.since)
    numeric = numeric_criteria(rubric)
    labels = labeled_verdicts(Store.open(settings.db_url), rubric_name=rubric.name, judge_model=args.judge_model,
                              channel_id=args.channel, since=since, numeric=numeric, everywhere=args.channel is None)
    where = scope_text(rubric, args.channel, args.judge_model)
    if not labels:
        terminal_calibration.show_no_labels(console, f"{where}, {period_text(args.since)}")
        return EXIT_OK
    figures = calibrate(labels, tags=tag_order(rubric), criteria=numeric)
    terminal_calibration.show_calibration(console, f"Calibration of {where}, {period_text(args.since)}",
                                          shown_figures(figures))
    terminal_calibration.show_warnings(console, calibration_warnings(figures, settings, rubric))
    return EXIT_OK


def since_of(text: str | None) -> datetime | None:
    """The moment --since names (7d, 30d, any Nd, a YYYY-MM-DD date, or all), in UTC as the history keeps it."""
    from bot.store import utcnow

    if text is None or text == "all":
        return None
    if days := DAYS.match(text):
        if int(days.group(1)) < 1:
            raise UsageError("--since takes at least 1d")
        return utcnow() - timedelta(days=int(days.group(1)))
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: give 7d, 30d, all or a date such as 2026-11-01") from None
    return datetime(day.year, day.month, day.day)


def period_text(since: str | None) -> str:
    """How --since reads in a title."""
    if since is None or since == "all":
        return "all time"
    return f"since {since}" if DAYS.match(since) is None else f"last {since[:-1]} days"


def scope_text(rubric: Rubric, channel: str | None, judge_model: str | None) -> str:
    """Which labels a title speaks of, made safe to print."""
    where = f"channel {channel}" if channel else "all channels and the terminal"
    judge = f", judge {judge_model}" if judge_model else ""
    return terminal.shown(f"{rubric.name} ({rubric.title}), {where}{judge}")


def numeric_criteria(rubric: Rubric) -> list[str]:
    """The rubric's numeric reply fields a summary averages (derived values are the rubric's, not a person's)."""
    from bot.rubric import leaves

    replied = {path for path, _ in leaves(rubric.output)}
    return [path for path in rubric.criteria() if path in replied]


def shown_figures(figures: Calibration) -> Calibration:
    """The figures with every name from outside (judge models, criteria) made safe to print with markup on."""
    return figures.model_copy(update={  # the confusion table is printed with markup off, as it is
        "mad": {terminal.shown(path): gap for path, gap in figures.mad.items()},
        "judge_models": {terminal.shown(name): count for name, count in figures.judge_models.items()},
        "rubric_hashes": {terminal.shown(name): count for name, count in figures.rubric_hashes.items()},
    })


def calibration_warnings(figures: Calibration, settings: Settings, rubric: Rubric) -> list[str]:
    """Why the figures may not say much of today's judge: low agreement, another judge or rubric version."""
    from bot.figures import percent

    warnings = []
    low = figures.agreement is not None and figures.agreement < settings.calibration_min_agreement
    if low and figures.pass_n >= settings.calibration_min_labels:
        warnings.append(f"the judge agrees with people on pass/fail in {percent(figures.agreement)} of "
                        f"{figures.pass_n} labels, below {percent(settings.calibration_min_agreement)} "
                        "(CALIBRATION_MIN_AGREEMENT): read its pass rates with care")
    model, count = next(iter(figures.judge_models.items()))
    if model != settings.judge_model:
        warnings.append(terminal.shown(f"{count} of {figures.n} labels were given on verdicts of {model}, but the "
                                       f"judge now is {settings.judge_model} (JUDGE_MODEL): these figures may not "
                                       "hold for it; `judgebot calibration check` measures it"))
    version, count = next(iter(figures.rubric_hashes.items()))
    if version != rubric.content_hash:
        warnings.append(terminal.shown(f"{count} of {figures.n} labels were given under another version of "
                                       f"{rubric.name} ({version}; loaded now: {rubric.version}, "
                                       f"{rubric.content_hash}): `judgebot calibration check` measures this one"))
    return warnings


# --- judgebot labels export -------------------------------------------------------------------------------------


async def labels_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot labels export`: every label of a rubric as a CSV that `calibration check --labels` reads back."""
    from bot.human_labels import labelable
    from bot.store import Store

    rubric = rubrics.get(args.rubric)
    cases = labeled_cases(Store.open(settings.db_url), rubric, args.channel)
    paths = list(labelable(rubric))
    if args.out is None:
        write_labels(sys.stdout, cases, paths)
        sys.stdout.flush()
        Console(stderr=True, highlight=False).print(f"{len(cases)} labels of {terminal.shown(rubric.name)}.")
        return EXIT_OK
    if args.out.is_dir():
        raise UsageError(f"{args.out} is a directory; give --out a file name")
    try:
        with args.out.open("w", encoding="utf-8-sig", newline="") as out:  # the BOM: Excel then reads UTF-8
            write_labels(out, cases, paths)
    except OSError as err:
        raise UsageError(f"cannot write {args.out}: {err.strerror or err}") from None
    console.print(f"{len(cases)} labels of {terminal.shown(rubric.name)} written to {terminal.shown(str(args.out))}.")
    return EXIT_OK


def labeled_cases(store: Store, rubric: Rubric, channel_id: str | None) -> list[LabeledCase]:
    """Every label and vote on scored judgments of the rubric (in one channel, or everywhere), the oldest first.

    A person's label of a judgment stands in for their vote on it, as in calibration's figures: an Agree says the
    judge's values were right, a Disagree only that pass/fail should have been the other way.
    """
    from bot.store.labels import labeled_judgments

    labels, votes = labeled_judgments(store, rubric_name=rubric.name, channel_id=channel_id,
                                      everywhere=channel_id is None)
    cases = [LabeledCase(judgment, label.user_id, label.updated_at, label_values(label.values, label.passed, rubric))
             for label, judgment in labels]
    cases += [LabeledCase(judgment, vote.user_id, vote.updated_at, vote_values(vote.agree, judgment, rubric))
              for vote, judgment in votes]
    return sorted(cases, key=lambda case: (case.labeled_at, case.judgment.id))


def label_values(values: dict[str, Any], passed: bool | None, rubric: Rubric) -> HumanValues:
    """A saved label as a person's values: only the fields of the rubric a person can label."""
    from bot.human_labels import HumanValues, labelable

    fields = labelable(rubric)
    return HumanValues(values={path: value for path, value in values.items() if path in fields}, passed=passed)


def vote_values(agree: bool, judgment: Judgment, rubric: Rubric) -> HumanValues:
    """A vote as a person's values: an Agree takes the judge's own, a Disagree says only pass/fail."""
    from bot.human_labels import HumanValues, labelable
    from bot.store.labels import value_at

    if not agree:
        return HumanValues(passed=None if judgment.passed is None else not judgment.passed)
    found = {path: value_at(judgment.output, path) for path in labelable(rubric)}
    return HumanValues(values={path: value for path, value in found.items() if value is not None},
                       passed=judgment.passed)


def write_labels(out: TextIO, cases: list[LabeledCase], paths: list[str]) -> None:
    """The labels as CSV: the texts, the person's values, then the judge's verdict and who labeled it when."""
    from bot.human_labels import PASS, PREFIX
    from bot.results_csv import neutralise

    writer = csv.writer(out)
    writer.writerow([*TEXT_COLUMNS, PREFIX + PASS, *(PREFIX + path for path in paths), *JUDGE_COLUMNS])
    for case in cases:
        judgment = case.judgment
        cells = [judgment.question, judgment.reference, judgment.answer, judgment.model_name,
                 case.human.passed, *(case.human.values.get(path) for path in paths),
                 judgment.passed, judgment.tag, judgment.judge_model, judgment.rubric_version, case.labeled_by,
                 case.labeled_at.isoformat(timespec="seconds"), judgment.id]
        writer.writerow([neutralise(cell_text(cell)) for cell in cells])


def cell_text(value: object) -> str:
    """A value as a CSV cell: booleans as true/false, nothing as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- judgebot calibration check ---------------------------------------------------------------------------------


async def check_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot calibration check`: judge the labeled rows again and compare today's judge with the labels."""
    from bot.store import Store

    if (args.labels is None) == (args.channel is None):
        raise UsageError("give --labels FILE (such as one `judgebot labels export` wrote) or --channel ID, not both")
    if args.since is not None:
        raise UsageError("--since belongs to `judgebot calibration`; a check judges every labeled row it is given")
    minimum = 0.8 if args.min_agreement is None else args.min_agreement
    if not 0 <= minimum <= 1:
        raise UsageError("--min-agreement is a share from 0 to 1, such as 0.8")
    rubric = rubrics.get(args.rubric)
    judge_model = args.judge_model or settings.judge_model
    if not settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    store = Store.open(settings.db_url)
    cases = check_cases(args, store, rubric, console)
    if not cases:
        raise UsageError(f"no labeled rows of {rubric.name} to check. {terminal_calibration.HOW_TO_LABEL}")
    tokens, cost = estimate(rubric, cases, judge_model)
    terminal_calibration.show_estimate(console, len(cases), terminal.shown(judge_model), tokens, cost)
    if not confirmed(len(cases), settings.calibration_confirm_rows, args.yes, console):
        console.print("Nothing judged.")
        return EXIT_USAGE
    judged = await judge_again(store, rubric, cases, settings, judge_model, args.fresh, console,
                               source_name=args.labels.name if args.labels else f"channel {args.channel}")
    current, original = check_figures(cases, judged, rubric)
    unscored = len(cases) - current.n
    if unscored:
        console.print(f"[yellow]{unscored} rows got no verdict[/] (a judge error or an invalid reply) and are left out.")
    today = terminal.shown(f"Today's judge: {judge_model}, {rubric.name} {rubric.version}")
    before = None if original is None else (
        terminal.shown(f"The labeled verdicts' judges: {', '.join(original.judge_models)}"), original)
    terminal_calibration.show_check(console, (today, current), before, minimum)
    return EXIT_OK if current.agreement is not None and current.agreement >= minimum else EXIT_BELOW


def check_cases(args: argparse.Namespace, store: Store, rubric: Rubric, console: Console) -> list[CheckCase]:
    """The labeled rows a check judges: from the labels file, else from the channel's labeled judgments."""
    if args.labels is not None:
        return cases_from_file(args.labels, rubric, console)
    from bot.csvio import CsvRow

    cases = []
    for line, case in enumerate(labeled_cases(store, rubric, args.channel), start=1):
        judgment = case.judgment
        row = CsvRow(line=line, question=judgment.question, reference=judgment.reference, answer=judgment.answer,
                     model=judgment.model_name, cells={})
        cases.append(CheckCase(row, case.human, (judgment.passed, judgment.tag, judgment.judge_model)))
    return cases


def cases_from_file(path: Path, rubric: Rubric, console: Console) -> list[CheckCase]:
    """The labeled rows of a CSV with human_ columns; rows without a label, or with an unreadable one, are skipped."""
    from bot.csvio import CsvRow, MalformedRow, open_csv
    from bot.human_labels import label_columns, read_label
    from bot.results_csv import restore as restored

    source = open_csv(path)
    columns, unknown = label_columns(source.headers, rubric)
    if not columns:
        raise UsageError(f"{path} has no human_pass or human_<field> column for {rubric.name}, so it holds no labels; "
                         "`judgebot labels export` writes such a file")
    for header in unknown:
        console.print(f"[yellow]warning[/]: column {terminal.shown(header)} names no field of {rubric.name} that can be "
                      "labeled; it is not read")
    knows_original = any(header in source.headers for header in ("judge_pass", "judge_tag"))
    cases = []
    for row in source:
        if isinstance(row, MalformedRow):
            console.print(f"[yellow]row {row.line}[/] skipped: {terminal.shown(row.reason)}")
            continue
        cells = {header: restored(cell) for header, cell in row.cells.items()}
        try:
            human = read_label(cells, columns, rubric)
        except ValueError as err:
            console.print(f"[yellow]row {row.line}[/] label not read: {terminal.shown(str(err))}")
            continue
        if human.empty:
            continue
        texts = CsvRow(line=row.line, question=restored(row.question), reference=restored(row.reference),
                       answer=restored(row.answer), model=row.model, cells={})
        cases.append(CheckCase(texts, human, original_of(cells) if knows_original else None))
    return cases


def original_of(cells: dict[str, str]) -> tuple[bool | None, str | None, str]:
    """What the judge of a labeled verdict gave, from the judge_pass, judge_tag and judge_model columns."""
    from bot.human_labels import FALSE_WORDS, TRUE_WORDS

    word = (cells.get("judge_pass") or "").strip().lower()
    passed = True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
    return passed, (cells.get("judge_tag") or "").strip() or None, (cells.get("judge_model") or "").strip()


def estimate(rubric: Rubric, cases: list[CheckCase], judge_model: str) -> tuple[tuple[int, int], float | None]:
    """((tokens in, tokens out), USD or None) of judging every case once: the texts and system prompt over four."""
    from bot.runs import price_of

    chars = sum(len(rubric.system_prompt) + len(case.row.question) + len(case.row.reference) + len(case.row.answer)
                for case in cases)
    tokens = (math.ceil(chars / CHARS_PER_TOKEN), TOKENS_OUT_PER_ROW * len(cases))
    price = price_of(judge_model)
    cost = None if price is None else (tokens[0] * price[0] + tokens[1] * price[1]) / 1_000_000
    return tokens, cost


def confirmed(rows: int, limit: int, yes: bool, console: Console) -> bool:
    """Whether to judge `rows`: at once up to `limit` or with --yes, else when the person at the terminal says so."""
    if rows <= limit or yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(f"{rows} rows is more than CALIBRATION_CONFIRM_ROWS ({limit}) and there is no terminal to "
                         "ask; pass --yes to judge them")
    answer = console.input(f"{rows} rows is more than CALIBRATION_CONFIRM_ROWS ({limit}). Judge them? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def check_panel(settings: Settings, judge_model: str) -> Panel:
    """Today's judge, or the one --judge-model names, asked once per row."""
    from bot.jury import open_panel

    return open_panel(settings.model_copy(update={"judge_model": judge_model}))


async def judge_again(store: Store, rubric: Rubric, cases: list[CheckCase], settings: Settings, judge_model: str,
                      fresh: bool, console: Console, *, source_name: str) -> dict[int, Judgment]:
    """Judge the cases as a run of its own (source "check"), with a progress bar; the judgments by row number."""
    from bot.errors import RunStopped
    from bot.llm import observing_retries
    from bot.records import RunState
    from bot.runs import execute_run, start_run

    panel = check_panel(settings, judge_model)
    # Only the texts go in the run: its rows must not be read as labels again if it is ever resumed and summarised.
    run = start_run(store, rubric=rubric, rows=[case.row for case in cases], columns=TEXT_COLUMNS,
                    source_name=source_name, fresh=fresh, origin=terminal_origin().model_copy(update={"source": "check"}),
                    **panel.run_fields())
    async with panel:
        with terminal.ProgressBar(console, f"{rubric.name} · check run {run.id}") as bar, \
                observing_retries(bar.retrying):
            outcome = await execute_run(store, run, rubric, panel, concurrency=settings.concurrency,
                                        on_progress=bar.update, unsure_spread=settings.unsure_spread)
    if outcome.status == RunState.PAUSED:
        raise RunStopped(f"{(outcome.stop_reason or 'the judge stopped').rstrip('.')}. The check is incomplete: "
                         "run it again once the judge answers")
    return {judgment.row_number: judgment for judgment in store.iter_judgments(run.id)
            if judgment.row_number is not None}


def check_figures(cases: list[CheckCase], judged: dict[int, Judgment],
                  rubric: Rubric) -> tuple[Calibration, Calibration | None]:
    """Today's judge against the labels, and the original judges against the same labels when the cases say."""
    from bot.calibration import calibrate
    from bot.human_labels import complete
    from bot.records import RowState
    from bot.runs.file_labels import tag_order
    from bot.store import utcnow

    now = utcnow()
    current: list[LabeledVerdict] = []
    original: list[LabeledVerdict] = []
    for case in cases:
        judgment = judged.get(case.row.line)
        scored = judgment is not None and judgment.status == RowState.SCORED
        # The person's values made whole against today's verdict: both judges are then held to the same label.
        human = complete(case.human, judgment.output if judgment is not None and scored else None, rubric)
        if judgment is not None and scored:
            current.append(verdict_pair(judgment.passed, judgment.tag, judgment.judge_model, human.passed, human.tag,
                                        now, judgment.rubric_hash))
        if case.original is not None:
            passed, tag, model = case.original
            original.append(verdict_pair(passed, tag, model or "an unnamed judge", human.passed, human.tag, now, ""))
    tags = tag_order(rubric)
    return calibrate(current, tags=tags), calibrate(original, tags=tags) if original else None


def verdict_pair(judge_passed: bool | None, judge_tag: str | None, judge_model: str, human_passed: bool | None,
                 human_tag: str | None, at: datetime, rubric_hash: str) -> LabeledVerdict:
    """One (judge, person) pair as calibration reads it."""
    from bot.calibration import LabeledVerdict

    return LabeledVerdict(judge_passed=judge_passed, judge_tag=judge_tag, human_passed=human_passed,
                          human_tag=human_tag, labeled_at=at, judge_model=judge_model, rubric_hash=rubric_hash)
