"""What the CLI shows of calibration: the judge against people's labels, a check of today's judge, and its cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.views.terminal_text import printable, shown
from bot.figures import percent, plural

if TYPE_CHECKING:  # only types: drawing the figures must not load the database or the judge
    from bot.trust.calibration import Calibration
    from bot.trust.drift import Gate
    from bot.trust.file_labels import FileLabels
    from bot.trust.report import Doubt

# The figures' names from outside judgebot (model names, criteria) are made safe by the caller (screen.shown); the
# confusion table is printed with markup off, from its raw names, so that its columns line up.
KEY_WIDTH = 24
HOW_TO_LABEL = (
    "Labels come from people: the Correct it button on a result card in Slack, the Agree / Disagree buttons, or "
    "human_pass and human_<field> columns in a CSV judged with `judgebot judge`."
)


def _line(console: Console, key: str, value: str) -> None:
    console.print(f"{key:<{KEY_WIDTH - 1}} {value}", highlight=False)  # a key as wide as the column keeps a space


def figure_lines(console: Console, figures: Calibration) -> None:
    """Agreement on pass/fail, both sides' pass rates with McNemar's test, and Cohen's kappa on pass/fail and (when
    the rubric has a tag) on the tag, each with its interval and n."""
    from bot.trust.calibration_texts import agreement_text, over_labels, pass_rates_text

    _line(console, "agreement on pass/fail", agreement_text(figures))
    _line(console, "pass rates", pass_rates_text(figures))
    _line(console, "kappa on pass/fail", shown(figures.kappa_pass.text()))
    if figures.tag_n:
        _line(console, "kappa on the tag", over_labels(shown(figures.kappa_tag.text(note=False)), figures.tag_n,
                                                       figures.kappa_tag.cases))


def gap_lines(console: Console, figures: Calibration) -> None:
    """Per numeric criterion: the signed and absolute differences, and an ordinal scale's weighted kappa."""
    from bot.trust.calibration_texts import gap_text

    if figures.gaps:
        console.print("scores, judge against people:", highlight=False)
    for criterion, gap in figures.gaps.items():  # criteria are made safe by the caller
        console.print(f"  {criterion}: {gap_text(gap)}", highlight=False)


def show_calibration(console: Console, title: str, figures: Calibration) -> None:
    """Every figure of the judge against the labels: agreement, pass rates, kappa, the confusion matrix, score gaps,
    weeks."""
    console.print(f"[bold]{title}[/]", highlight=False)
    _line(console, "labels", labels_text(figures))
    figure_lines(console, figures)
    if figures.confusion is not None:
        console.print("tags, judge (rows) against people (columns):", highlight=False)
        confusion_lines(console, figures)
    gap_lines(console, figures)
    from bot.trust.stats.kappa import noted

    console.print("labels per week:", highlight=False)
    for week, count, cases, agreement in figures.by_week:
        console.print(f"  {week}  {count:>5} labels  agreement {noted(percent(agreement), cases)}", highlight=False)
    _line(console, "judge models", _counts(figures.judge_models))
    _line(console, "rubric versions", _counts(figures.rubric_hashes))


def labels_text(figures: Calibration) -> str:
    """How many labels, and of how many cases when several people labeled some: "54 (40 cases)"."""
    return f"{figures.n} ({figures.pass_cases} cases)" if figures.clustered else str(figures.n)


def confusion_lines(console: Console, figures: Calibration) -> None:
    """The judge's tags against people's, as a table: printed as it is (markup off) so its columns line up."""
    if figures.confusion is None:
        return
    for row in figures.confusion.table(width=console.width - 2):  # as wide as the terminal: no name cut with room
        console.print("  " + printable(row), markup=False, highlight=False)


def show_file_labels(console: Console, labels: FileLabels) -> None:
    """The judge against the labels a file's human_ columns hold: agreement, kappa, the confusion matrix."""
    from bot.trust.labels import unknown_text

    for header in labels.unknown:
        console.print(f"[yellow]warning[/]: {shown(unknown_text(header, labels.meant.get(header)))}", highlight=False)
    for header, read in labels.repeated:
        console.print(f"[yellow]warning[/]: column {shown(header)} names the same label as column {shown(read)}, which "
                      "is read (the leftmost of them); it was not read", highlight=False)
    for header, fields in labels.ambiguous:
        from bot.trust.labels import ambiguity_text

        console.print(f"[yellow]warning[/]: {shown(ambiguity_text(header, fields))}", highlight=False)
    for row, problem in labels.problems:
        console.print(f"[yellow]row {row}[/] label not read: {shown(problem)}", highlight=False)
    if labels.unreadable > len(labels.problems):
        console.print(f"... and {labels.unreadable - len(labels.problems)} more rows whose label was not read",
                      highlight=False)
    figures = labels.calibration
    if figures is None:
        return
    if not figures.n:
        console.print("The file's label columns are empty for every scored row.")
        return
    console.print(f"[bold]The judge against the file's labels[/] ({figures.n} {plural(figures.n, 'label')})",
                  highlight=False)
    figure_lines(console, figures)
    confusion_lines(console, figures)
    gap_lines(console, shown_figures(figures))


def _counts(counts: dict[str, int]) -> str:
    return " · ".join(f"{name} ({count})" for name, count in counts.items())


def show_no_labels(console: Console, where: str) -> None:
    """No labels yet: where none were found, and how people give some."""
    console.print(f"No labels found ({where}), so there is nothing to measure the judge against yet.",
                  highlight=False)
    console.print(HOW_TO_LABEL, highlight=False)


def show_doubts(console: Console, doubts: Sequence[Doubt], rubric_name: str, judge_setting: str) -> None:
    """Why the figures may not say much of the judge this terminal judges with, a warning a line, each naming the
    setting or command that answers it."""
    from bot.trust.report import LowAgreement, OtherJudge

    for doubt in doubts:
        if isinstance(doubt, LowAgreement):
            text = (f"the judge agrees with people on pass/fail in {percent(doubt.agreement)} of {doubt.cases} labeled "
                    f"cases, below {percent(doubt.minimum)} (CALIBRATION_MIN_AGREEMENT): read its pass rates with care")
        elif isinstance(doubt, OtherJudge):
            text = (f"{doubt.labels} of {doubt.n} labels were given on verdicts of {doubt.given_on}, but the judge now is "
                    f"{doubt.now} ({judge_setting}): these figures may not hold for it; `judgebot calibration check` "
                    "measures it")
        else:
            text = (f"{doubt.labels} of {doubt.n} labels were given under another version of {rubric_name} "
                    f"({doubt.given_on}; loaded now: {doubt.now.rubric_version}, {doubt.now.rubric_hash}): "
                    "`judgebot calibration check` measures this one")
        console.print(f"[yellow]warning[/]: {shown(text)}", highlight=False)


def show_check(console: Console, current: tuple[str, Calibration], original: tuple[str, Calibration] | None,
               gate: Gate) -> None:
    """Today's judge against the labels beside the judges that gave the labeled verdicts, and each condition of the
    gate with its figure."""
    judges = [current, *([original] if original is not None else [])]
    for name, figures in judges:
        console.print(f"[bold]{name}[/]", highlight=False)
        _line(console, "labels", labels_text(figures))
        figure_lines(console, figures)
    if original is None:
        console.print("The labels do not say what the original judge gave (no judge_pass or judge_tag column).",
                      highlight=False)
    for condition in gate.conditions(current[1]):
        mark = "[green]ok[/]" if condition.met else "[red]below[/]"
        console.print(f"{mark}: {condition.asked}: {condition.found}", highlight=False)


def shown_figures(figures: Calibration) -> Calibration:
    """The figures with every name from outside (judge models, criteria) made safe to print with markup on."""
    return figures.model_copy(update={  # the confusion table is printed with markup off, as it is
        "gaps": {shown(path): gap for path, gap in figures.gaps.items()},
        "judge_models": {shown(name): count for name, count in figures.judge_models.items()},
        "rubric_hashes": {shown(name): count for name, count in figures.rubric_hashes.items()},
    })
