"""The calibration commands: how far to trust the judge from people's labels, and the labels as a CSV."""

from __future__ import annotations

import argparse
import csv
import sys
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

from bot.cli import calibration_views, views
from bot.cli.judging import EXIT_OK, settled
from bot.config import Settings
from bot.errors import UsageError
from bot.records import is_period, period_days

if TYPE_CHECKING:
    from bot.rubric import Rubric, RubricSet
    from bot.trust.calibration import Calibration
    from bot.trust.cases import LabeledCase

TEXT_COLUMNS = ["question", "reference", "answer", "model"]
JUDGE_COLUMNS = ["judge_pass", "judge_tag", "judge_model", "rubric_version", "labeled_by", "labeled_at", "judgment_id"]


# --- judgebot calibration ---------------------------------------------------------------------------------------


async def calibration_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot calibration`: the judge's figures against every label (`calibration check` is bot.calibration_check)."""
    if args.labels or args.yes or args.fresh or args.min_agreement is not None:
        raise UsageError("--labels, --min-agreement, --yes and --fresh belong to `judgebot calibration check`")
    from bot.judge.panel import configured_judge_name
    from bot.store import Store
    from bot.trust.report import JudgeInUse, TrustBar, rubric_trust

    settled()
    rubric = rubrics.get(args.rubric)
    since = since_of(args.since)
    # Held against the judge this terminal would judge with now, and the rubric file loaded.
    now = JudgeInUse(configured_judge_name(settings), rubric.content_hash, rubric.version)
    report = rubric_trust(Store.open(settings.db_url), rubric_name=rubric.name, rubric=rubric, channel_id=args.channel,
                          team_id=None, since=since, bar=TrustBar.from_settings(settings), judge_model=args.judge_model,
                          everywhere=args.channel is None, now=now)
    where = scope_text(rubric, args.channel, args.judge_model)
    if not report.figures.n:
        calibration_views.show_no_labels(console, f"{where}, {period_text(args.since)}")
        return EXIT_OK
    calibration_views.show_calibration(console, f"Calibration of {where}, {period_text(args.since)}",
                                       shown_figures(report.figures))
    calibration_views.show_doubts(console, report.doubts, rubric.name, judge_setting(settings))
    return EXIT_OK


def judge_setting(settings: Settings) -> str:
    """The setting that names the judge this terminal judges with."""
    return "JUDGES_FILE" if settings.judges_file else "JUDGES" if settings.judges.strip() else "JUDGE_MODEL"


def since_of(text: str | None) -> datetime | None:
    """The moment --since names (7d, 30d, any period of days, a YYYY-MM-DD date, or all), in UTC as the history keeps
    it."""
    from bot.store import utcnow

    if text is None:
        return None
    if is_period(text):
        try:
            days = period_days(text)
        except ValueError as err:
            raise UsageError(f"--since {text}: {err}") from None
        return None if days is None else utcnow() - timedelta(days=days)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: give 7d, 30d, all or a date such as 2026-11-01") from None
    return datetime(day.year, day.month, day.day)


def period_text(since: str | None) -> str:
    """How --since reads in a title."""
    if since is None or since.strip().lower() == "all":
        return "all time"
    return f"last {since.strip()[:-1]} days" if is_period(since) else f"since {since}"


def scope_text(rubric: Rubric, channel: str | None, judge_model: str | None) -> str:
    """Which labels a title speaks of, made safe to print."""
    where = f"channel {channel}" if channel else "all channels and the terminal"
    judge = f", judge {judge_model}" if judge_model else ""
    return views.shown(f"{rubric.name} ({rubric.title}), {where}{judge}")


def shown_figures(figures: Calibration) -> Calibration:
    """The figures with every name from outside (judge models, criteria) made safe to print with markup on."""
    return figures.model_copy(update={  # the confusion table is printed with markup off, as it is
        "mad": {views.shown(path): gap for path, gap in figures.mad.items()},
        "judge_models": {views.shown(name): count for name, count in figures.judge_models.items()},
        "rubric_hashes": {views.shown(name): count for name, count in figures.rubric_hashes.items()},
    })


# --- judgebot labels export -------------------------------------------------------------------------------------


async def labels_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot labels export`: every label of a rubric as a CSV that `calibration check --labels` reads back."""
    from bot.store import Store
    from bot.trust.cases import labeled_cases
    from bot.trust.labels import labelable

    settled()
    rubric = rubrics.get(args.rubric)
    cases = labeled_cases(Store.open(settings.db_url), rubric, args.channel)
    paths = list(labelable(rubric))
    if args.out is None:
        write_labels(sys.stdout, cases, paths)
        sys.stdout.flush()
        Console(stderr=True, highlight=False).print(f"{len(cases)} labels of {views.shown(rubric.name)}.")
        return EXIT_OK
    if args.out.is_dir():
        raise UsageError(f"{args.out} is a directory; give --out a file name")
    try:
        with args.out.open("w", encoding="utf-8-sig", newline="") as out:  # the BOM: Excel then reads UTF-8
            write_labels(out, cases, paths)
    except OSError as err:
        raise UsageError(f"cannot write {args.out}: {err.strerror or err}") from None
    console.print(f"{len(cases)} labels of {views.shown(rubric.name)} written to {views.shown(str(args.out))}.")
    return EXIT_OK


def write_labels(out: TextIO, cases: list[LabeledCase], paths: list[str]) -> None:
    """The labels as CSV: the texts, the person's values, then the judge's verdict and who labeled it when."""
    from bot.csvfiles.results import neutralise
    from bot.trust.labels import PASS, PREFIX

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
