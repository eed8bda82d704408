"""The calibration commands: how far to trust the judge from people's labels, and the labels as a CSV."""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console

from bot.cli import calibration_views, views
from bot.cli.judging import EXIT_OK, settled
from bot.config import Settings
from bot.errors import UsageError
from bot.records import is_period, period_days

if TYPE_CHECKING:
    from bot.rubric import Rubric, RubricSet
    from bot.store import Judgment, Store
    from bot.trust.calibration import Calibration
    from bot.trust.labels import HumanValues

TEXT_COLUMNS = ["question", "reference", "answer", "model"]
JUDGE_COLUMNS = ["judge_pass", "judge_tag", "judge_model", "rubric_version", "labeled_by", "labeled_at", "judgment_id"]


@dataclass
class LabeledCase:
    """One label or vote in the history, with the judgment it is about and what the person says as field values."""

    judgment: Judgment
    labeled_by: str
    labeled_at: datetime
    human: HumanValues


# --- judgebot calibration ---------------------------------------------------------------------------------------


async def calibration_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot calibration`: the judge's figures against every label (`calibration check` is bot.calibration_check)."""
    if args.labels or args.yes or args.fresh or args.min_agreement is not None:
        raise UsageError("--labels, --min-agreement, --yes and --fresh belong to `judgebot calibration check`")
    from bot.store import Store
    from bot.store.labels import labeled_verdicts
    from bot.trust.calibration import calibrate
    from bot.trust.labels import numeric_paths, tag_order

    settled()
    rubric = rubrics.get(args.rubric)
    since = since_of(args.since)
    numeric = numeric_paths(rubric)  # the numbers a person can label, as Slack and the digest compare them
    labels = labeled_verdicts(Store.open(settings.db_url), rubric_name=rubric.name, judge_model=args.judge_model,
                              channel_id=args.channel, since=since, numeric=numeric, everywhere=args.channel is None)
    where = scope_text(rubric, args.channel, args.judge_model)
    if not labels:
        calibration_views.show_no_labels(console, f"{where}, {period_text(args.since)}")
        return EXIT_OK
    figures = calibrate(labels, tags=tag_order(rubric), criteria=numeric)
    calibration_views.show_calibration(console, f"Calibration of {where}, {period_text(args.since)}",
                                          shown_figures(figures))
    calibration_views.show_warnings(console, calibration_warnings(figures, settings, rubric))
    return EXIT_OK


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
        warnings.append(views.shown(f"{count} of {figures.n} labels were given on verdicts of {model}, but the "
                                       f"judge now is {settings.judge_model} (JUDGE_MODEL): these figures may not "
                                       "hold for it; `judgebot calibration check` measures it"))
    version, count = next(iter(figures.rubric_hashes.items()))
    if version != rubric.content_hash:
        warnings.append(views.shown(f"{count} of {figures.n} labels were given under another version of "
                                       f"{rubric.name} ({version}; loaded now: {rubric.version}, "
                                       f"{rubric.content_hash}): `judgebot calibration check` measures this one"))
    return warnings


# --- judgebot labels export -------------------------------------------------------------------------------------


async def labels_command(args: argparse.Namespace, settings: Settings, rubrics: RubricSet, console: Console) -> int:
    """`judgebot labels export`: every label of a rubric as a CSV that `calibration check --labels` reads back."""
    from bot.store import Store
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
    from bot.trust.labels import HumanValues, labelable

    fields = labelable(rubric)
    return HumanValues(values={path: value for path, value in values.items() if path in fields}, passed=passed)


def vote_values(agree: bool, judgment: Judgment, rubric: Rubric) -> HumanValues:
    """A vote as a person's values: an Agree takes the judge's own, a Disagree says only pass/fail."""
    from bot.store.labels import value_at
    from bot.trust.labels import HumanValues, labelable

    if not agree:
        return HumanValues(passed=None if judgment.passed is None else not judgment.passed)
    found = {path: value_at(judgment.output, path) for path in labelable(rubric)}
    return HumanValues(values={path: value for path, value in found.items() if value is not None},
                       passed=judgment.passed)


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
