"""How `judgebot judges compare` looks in a terminal: both judges against people, then against each other."""

from __future__ import annotations

from rich.console import Console

from bot.cli.views.calibration import figure_lines
from bot.cli.views.terminal_text import Column, fitted_table, shown
from bot.figures import percent
from bot.trust.judge_comparison import FLIPS_SHOWN, HistorySide, LabeledSide

QUESTION_ROOM = 70  # characters of a flipped row's question


def verdict(passed: bool | None, tag: str | None, headline: float | None) -> str:
    """"pass, Correct, 100" as a flipped row shows a verdict."""
    said = "pass" if passed else "fail" if passed is not None else "no pass/fail"
    return ", ".join(part for part in (said, tag, None if headline is None else f"{float(headline):.0f}") if part)


def show_comparison(console: Console, old: str, new: str, labeled: LabeledSide | None, history: HistorySide, *,
                    labels_from: str) -> None:
    """Both judges against people's labels (when there are any), then against each other on the recent judgments."""
    if labeled is not None:
        console.print(f"[bold]Against people's labels[/] ({shown(labels_from)}; the cases both judges scored)",
                      highlight=False)
        for name, figures in ((f"{old} (in use)", labeled.old), (f"{new} (candidate)", labeled.new)):
            console.print(f"[bold]{shown(name)}[/]", highlight=False)
            figure_lines(console, figures)
        console.print(shown(f"Right where the other was wrong: {new} {labeled.new_right}, {old} {labeled.old_right} "
                            f"({labeled.mcnemar_text()})"), highlight=False)
        if labeled.unscored:
            console.print(f"[yellow]{labeled.unscored} labeled cases got no verdict from one of them[/] and are left "
                          "out.", highlight=False)
    else:
        console.print("No labeled cases: give --channel ID or --labels FILE to see each judge against people.",
                      highlight=False)
    show_history(console, old, new, history)


def show_history(console: Console, old: str, new: str, history: HistorySide) -> None:
    """The two judges on the recent judgments: agreement, flips, tag transitions, headline shift, flipped rows."""
    if not history.n:
        console.print("No recent judgments to compare them on." if not history.unscored else
                      f"[yellow]None of the {history.unscored} recent judgments got a verdict from both[/].",
                      highlight=False)
        return
    console.print(f"[bold]On {history.n} recent judgments[/] (a random sample, judged again by both)", highlight=False)
    low_high = "" if history.interval is None else \
        f", 95% CI {percent(history.interval[0])}-{percent(history.interval[1])} (Wilson)"
    console.print(f"  the same pass/fail on {percent(history.agreement)} ({history.same_pass}/{history.pass_n})"
                  f"{low_high}; kappa between them {shown(kappa_text(history))}", highlight=False)
    console.print(shown(f"  flips: pass -> fail {history.to_fail}, fail -> pass {history.to_pass} "
                        f"({old} -> {new})"), highlight=False)
    if history.shift is not None:
        console.print(f"  mean headline shift {history.shift_text()}", highlight=False)
    if history.unscored:
        console.print(f"  [yellow]{history.unscored} rows got no verdict from one of them[/] and are left out.",
                      highlight=False)
    if history.tags:
        olds = sorted({tag for tag, _ in history.tags})
        news = sorted({tag for _, tag in history.tags})
        columns = [Column(f"{old} \\ {new}"), *(Column(tag, 1) for tag in news)]
        rows = [[tag, *(str(history.tags.get((tag, other), 0)) for other in news)] for tag in olds]
        console.print(fitted_table(console, columns, rows, title=shown("Tags: the judge in use's (rows) against the "
                                                                     "candidate's (columns)")))
    for flip in history.flips[:FLIPS_SHOWN]:  # named by their question: the comparison's own rows open nowhere
        model = f" ({flip.model})" if flip.model else ""
        console.print(shown(f"  {question_shown(flip.question)}{model}: {old} "
                            f"{verdict(flip.old.passed, flip.old.tag, flip.old.headline)}; {new} "
                            f"{verdict(flip.new.passed, flip.new.tag, flip.new.headline)}"), highlight=False)
    if len(history.flips) > FLIPS_SHOWN:
        console.print(f"  ...and {len(history.flips) - FLIPS_SHOWN} more flipped rows", highlight=False)


def question_shown(question: str, room: int = QUESTION_ROOM) -> str:
    """A question in one line, in quotes, cut after a word to at most `room` characters with "…" (plain text: print
    it through `shown`)."""
    line = " ".join(question.split())
    if len(line) <= room:
        return f'"{line}"'
    head = line[:room - 1]
    if line[room - 1] != " " and " " in head:  # not in the middle of a word
        head = head.rsplit(" ", 1)[0]
    return f'"{head.rstrip()}…"'


def kappa_text(history: HistorySide) -> str:
    """Cohen's kappa between the two judges on pass/fail with its interval, or why there is none."""
    return history.kappa.text(note=False)

