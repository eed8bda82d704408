"""`judgebot align`: a candidate rubric with worked examples from people's corrections, measured by cross-validation
against the rubric as it is, and written as a new rubric file beside the one in use (which stays as it is)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import calibration_views
from bot.cli.check import check_cases, check_panel, judge_again, start_check
from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.cli.judging import cost_agreed
from bot.cli.screen import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.rubric import Rubric
    from bot.store import Judgment
    from bot.trust.align import AlignReport
    from bot.trust.drift import CheckCase

CHANGES_SHOWN = 10  # fixed and broken cases listed each


async def align(ctx: Context) -> int:
    """Build the candidate from the labels, judge the held-out cases with the rubric and the candidate, report and
    write the candidate."""
    from bot.trust.align import MIN_CORRECTIONS, MIN_LABELS, Aligned, candidate_file, cross_validate

    args, console = ctx.args, ctx.console
    if args.labels is not None and args.channel is not None:
        raise UsageError("give --labels FILE (such as one `judgebot labels export` wrote) or --channel ID, not both")
    if not 2 <= args.folds <= 20 or not 1 <= args.examples <= 20:
        raise UsageError("--folds takes 2 to 20, --examples 1 to 20")
    rubric = ctx.rubrics.get(args.rubric)
    cases = check_cases(ctx, rubric)
    if len(cases) < MIN_LABELS:
        raise UsageError(f"{len(cases)} labeled cases of {rubric.name} are too few to align on: it takes at least "
                         f"{MIN_LABELS}, {MIN_CORRECTIONS} of them corrections of the judge. "
                         f"{calibration_views.HOW_TO_LABEL}")
    settled()

    async def judged(with_rubric: Rubric, some: list[CheckCase], what: str, lead: str) -> dict[int, Judgment] | None:
        return await _judged(ctx, with_rubric, some, what, lead=lead, quiet=with_rubric is not rubric)

    found = await cross_validate(cases, rubric, folds=args.folds, examples=args.examples, judge=judged,
                                 name=f"{rubric.name}-aligned")
    if not isinstance(found, Aligned):
        if found is not None:
            console.print(f"{found} Nothing written.", highlight=False)
        return EXIT_USAGE
    _show(ctx, rubric, found.report)
    path = _target(ctx, found.candidate.name)
    path.write_text(candidate_file(found, rubric, date.today().isoformat()), encoding="utf-8")
    console.print(f"The candidate is in {shown(str(path))}; {shown(rubric.name)} in use is unchanged. Judge with it "
                  f"as `--rubric {shown(found.candidate.name)}` once its folder is RUBRICS_DIR.", highlight=False)
    return EXIT_OK


def _target(ctx: Context, name: str) -> Path:
    """Where the candidate goes: --out (a folder, or a .yaml file), else RUBRICS_DIR, else here."""
    folder = ctx.args.out or ctx.settings.rubrics_dir or Path.cwd()
    path = folder if folder.suffix in (".yaml", ".yml") else folder / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


async def _judged(ctx: Context, rubric: Rubric, cases: list[CheckCase], what: str, *, lead: str,
                  quiet: bool = False) -> dict[int, Judgment] | None:
    """The cases judged with `rubric` as a run of its own kept out of every figure (its estimate agreed first);
    None when it was not."""
    panel = check_panel(ctx, rubric)
    run = start_check(ctx, rubric, cases, panel, source_name=f"align {rubric.name}: {what}")
    go, budget = await cost_agreed(ctx, run, rubric, panel, new=True, quiet=quiet, lead=lead, batch=ctx.args.batch)
    if not go:
        return None
    async with panel:
        return await judge_again(ctx, run, rubric, panel, budget=budget)


def _show(ctx: Context, rubric: Rubric, found: AlignReport) -> None:
    from bot.trust.texts import agreement_text

    console = ctx.console
    console.print(f"[bold]{shown(rubric.name)}: the rubric as it is against the candidate, each on cases its examples "
                  f"never came from[/] ({found.n} held-out cases, {found.corrections} corrections)", highlight=False)
    for name, figures in (("as it is", found.before), ("candidate", found.after)):
        console.print(f"  {name:<10} agreement {shown(agreement_text(figures))}; kappa "
                      f"{shown(figures.kappa_pass.text())}", highlight=False)
    p = "n/a" if found.p is None else "p < 0.001" if found.p < 0.001 else f"p = {found.p:.2f}"
    console.print(f"  fixed {len(found.fixed)}, broken {len(found.broken)} (McNemar {p})", highlight=False)
    if found.unjudged:
        console.print(f"  [yellow]{found.unjudged} cases got no verdict from one of them[/] and are left out.")
    console.print("  " + ("The candidate agrees with people more often, and not by chance." if found.improved else
                          "No improvement that could not be chance: keep the rubric as it is, or label more cases."),
                  highlight=False)
    for title, changes in (("fixed", found.fixed), ("broken", found.broken)):
        for change in changes[:CHANGES_SHOWN]:
            console.print(f"  {title} row {change.line}: people {shown(change.human)}; before {shown(change.before)},"
                          f" after {shown(change.after)} · {shown(' '.join(change.question.split())[:70])}",
                          highlight=False)
