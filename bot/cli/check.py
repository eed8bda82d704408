"""`judgebot calibration check`: the labeled rows judged again by today's judge, its agreement with the labels beside
that of the judges that made the labeled verdicts, and an exit code a CI job can gate on."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli import calibration_views, views
from bot.cli.calibration import TEXT_COLUMNS
from bot.cli.judging import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE, settled, terminal_origin
from bot.config import Settings
from bot.errors import UsageError
from bot.trust.cases import labeled_cases

if TYPE_CHECKING:
    from bot.csvfiles.reading import CsvRow
    from bot.judge.panel import Panel
    from bot.rubric import Rubric, RubricSet
    from bot.runs import Origin
    from bot.runs.estimate import Estimate
    from bot.store import Judgment, Store
    from bot.trust.calibration import Calibration, LabeledVerdict
    from bot.trust.labels import HumanValues

EXIT_BELOW = EXIT_UNSCORED  # a check below --min-agreement fails like a run with rows left unscored


@dataclass
class CheckCase:
    """A labeled row to judge again: its texts, the person's label, and what the original judge gave, when known."""

    row: CsvRow
    human: HumanValues
    original: tuple[bool | None, str | None, str] | None  # (passed, tag, judge model)


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
    store = Store.open(settings.db_url)
    cases = check_cases(args, store, rubric, console)
    if not cases:
        raise UsageError(f"no labeled rows of {rubric.name} to check. {calibration_views.HOW_TO_LABEL}")
    async with check_panel(settings, args, rubric) as panel:
        views.show_estimate(console, "Judging the labeled rows again", estimate(rubric, cases, panel, store))
        if not confirmed(len(cases), settings.calibration_confirm_rows, args.yes, console):
            console.print("Nothing judged.")
            return EXIT_USAGE
        judged = await judge_again(store, rubric, cases, panel, settings, args.fresh, console,
                                   source_name=args.labels.name if args.labels else f"channel {args.channel}")
    current, original = check_figures(cases, judged, rubric)
    unscored = len(cases) - current.n
    if unscored:
        console.print(f"[yellow]{unscored} rows got no verdict[/] (a judge error or an invalid reply) and are left out.")
    today = views.shown(f"Today's judge: {judges_of(panel)}, {rubric.name} {rubric.version}")
    before = None if original is None else (
        views.shown(f"The labeled verdicts' judges: {', '.join(original.judge_models)}"), original)
    calibration_views.show_check(console, (today, current), before, minimum)
    return EXIT_OK if current.agreement is not None and current.agreement >= minimum else EXIT_BELOW


def check_cases(args: argparse.Namespace, store: Store, rubric: Rubric, console: Console) -> list[CheckCase]:
    """The labeled rows a check judges: from the labels file, else from the channel's labeled judgments."""
    if args.labels is not None:
        return cases_from_file(args.labels, rubric, console)
    from bot.csvfiles.reading import CsvRow

    cases = []
    for line, case in enumerate(labeled_cases(store, rubric, args.channel), start=1):
        judgment = case.judgment
        row = CsvRow(line=line, question=judgment.question, reference=judgment.reference, answer=judgment.answer,
                     model=judgment.model_name, cells={})
        cases.append(CheckCase(row, case.human, (judgment.passed, judgment.tag, judgment.judge_model)))
    return cases


def cases_from_file(path: Path, rubric: Rubric, console: Console) -> list[CheckCase]:
    """The labeled rows of a CSV with human_ columns; rows without a label, or with an unreadable one, are skipped."""
    from bot.csvfiles.reading import CsvRow, MalformedRow, open_csv
    from bot.csvfiles.results import restore as restored
    from bot.trust.labels import label_columns, read_label

    source = open_csv(path)
    columns, unknown = label_columns(source.headers, rubric)
    if not columns:
        raise UsageError(f"{path} has no human_pass or human_<field> column for {rubric.name}, so it holds no labels; "
                         "`judgebot labels export` writes such a file")
    for header in unknown:
        console.print(f"[yellow]warning[/]: column {views.shown(header)} names no field of {rubric.name} that can be "
                      "labeled; it is not read")
    knows_original = any(header in source.headers for header in ("judge_pass", "judge_tag"))
    cases = []
    for row in source:
        if isinstance(row, MalformedRow):
            console.print(f"[yellow]row {row.line}[/] skipped: {views.shown(row.reason)}")
            continue
        cells = {header: restored(cell) for header, cell in row.cells.items()}
        try:
            human = read_label(cells, columns, rubric)
        except ValueError as err:
            console.print(f"[yellow]row {row.line}[/] label not read: {views.shown(str(err))}")
            continue
        if human.empty:
            continue
        texts = CsvRow(line=row.line, question=restored(row.question), reference=restored(row.reference),
                       answer=restored(row.answer), model=row.model, cells={})
        cases.append(CheckCase(texts, human, original_of(cells) if knows_original else None))
    return cases


def original_of(cells: dict[str, str]) -> tuple[bool | None, str | None, str]:
    """What the judge of a labeled verdict gave, from the judge_pass, judge_tag and judge_model columns."""
    from bot.trust.labels import FALSE_WORDS, TRUE_WORDS

    word = (cells.get("judge_pass") or "").strip().lower()
    passed = True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
    return passed, (cells.get("judge_tag") or "").strip() or None, (cells.get("judge_model") or "").strip()


def estimate(rubric: Rubric, cases: list[CheckCase], panel: Panel, store: Store) -> Estimate:
    """What judging every case by every judge and sample of the panel is likely to cost."""
    from bot.records import Triple
    from bot.runs.estimate import estimate_rows

    triples = (Triple(question=case.row.question, reference=case.row.reference, answer=case.row.answer)
               for case in cases)
    return estimate_rows(rubric, triples, judges=[client.model for client in panel.clients], samples=panel.samples,
                         prices=panel.prices, store=store)


def judges_of(panel: Panel) -> str:
    """The panel as a check names it: its judges, and how many samples each gives a row."""
    return panel.name if panel.samples == 1 else f"{panel.name}, {panel.samples} samples each"


def confirmed(rows: int, limit: int, yes: bool, console: Console) -> bool:
    """Whether to judge `rows`: at once up to `limit` or with --yes, else when the person at the terminal says so."""
    from bot.cli.cost import agreed

    over = f"{rows} rows is more than CALIBRATION_CONFIRM_ROWS ({limit})"
    return rows <= limit or agreed(f"{over}. Judge them?", f"{over} and there is no terminal to ask; pass --yes to "
                                   "judge them", yes=yes, console=console)


def check_origin() -> Origin:
    """A check run's origin: the terminal's person, under a channel key of its own so nothing is counted twice."""
    from bot.runs import CHECK_CHANNEL

    return terminal_origin().model_copy(update={"source": "check", "channel_id": CHECK_CHANNEL})


def check_panel(settings: Settings, args: argparse.Namespace, rubric: Rubric) -> Panel:
    """Today's judges as `judgebot judge` would ask them (--judges, --judges-file, the configured jury, else
    JUDGE_MODEL; --samples), or the one judge --judge-model names."""
    from bot.cli.judging import judge_panel

    if args.judge_model:
        if args.judges or args.judges_file:
            raise UsageError("give --judge-model (one judge) or --judges / --judges-file (a jury), not both")
        settings = settings.model_copy(update={"judge_model": args.judge_model, "judges": "", "judges_file": None})
    return judge_panel(settings, args, rubric)


async def judge_again(store: Store, rubric: Rubric, cases: list[CheckCase], panel: Panel, settings: Settings,
                      fresh: bool, console: Console, *, source_name: str) -> dict[int, Judgment]:
    """Judge the cases as a run of its own (source "check"), with a progress bar; the judgments by row number."""
    from bot.errors import RunStopped
    from bot.llm.retries import observing_retries
    from bot.records import RunState
    from bot.runs import execute_run, start_run

    settled()
    # Only the texts go in the run: its rows must not be read as labels again if it is ever resumed and summarised.
    run = start_run(store, rubric=rubric, rows=[case.row for case in cases], columns=TEXT_COLUMNS,
                    source_name=source_name, fresh=fresh, origin=check_origin(),
                    **panel.run_fields())
    with views.ProgressBar(console, f"{rubric.name} · check run {run.id}") as bar, observing_retries(bar.retrying):
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
    from bot.records import RowState
    from bot.store import utcnow
    from bot.trust.calibration import calibrate
    from bot.trust.labels import complete, tag_order

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
    from bot.trust.calibration import LabeledVerdict

    return LabeledVerdict(judge_passed=judge_passed, judge_tag=judge_tag, human_passed=human_passed,
                          human_tag=human_tag, labeled_at=at, judge_model=judge_model, rubric_hash=rubric_hash)
