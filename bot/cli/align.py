"""`judgebot align`: a candidate rubric with worked examples from people's corrections, measured by cross-validation
against the rubric as it is, and written as a new rubric file beside the one in use (which stays as it is)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.check import check_cases, check_panel, judge_again, start_check
from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.cli.judging import cost_agreed
from bot.cli.views.calibration import HOW_TO_LABEL
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.rubric import Rubric
    from bot.store import Judgment
    from bot.trust.align_report import AlignReport
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
    from bot.trust.drift import case_count

    rubric = ctx.rubrics.get(args.rubric)
    cases = check_cases(ctx, rubric)
    if (count := case_count(cases)) < MIN_LABELS:
        raise UsageError(f"{count} labeled cases of {rubric.name} are too few to align on: it takes at least "
                         f"{MIN_LABELS}, {MIN_CORRECTIONS} of them corrections of the judge. "
                         f"{HOW_TO_LABEL}")
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
    from bot.trust.align_report import verdict_text
    from bot.trust.calibration_texts import agreement_text, tag_agreement_text
    from bot.trust.stats.mcnemar import p_text

    console = ctx.console
    labels = f", {found.labels} labels" if found.labels != found.n else ""
    console.print(f"[bold]{shown(rubric.name)}: the rubric as it is against the candidate, each on cases its examples "
                  f"never came from[/] ({found.n} held-out cases{labels}, {found.corrections} corrections; folds by "
                  "question)", highlight=False)
    figures = (("as it is", found.before), ("candidate", found.after))
    for name, side in figures:
        console.print(f"  {name:<10} agreement on pass/fail {shown(agreement_text(side))}; kappa "
                      f"{shown(side.kappa_pass.text())}", highlight=False)
    console.print(f"  pass/fail: fixed {len(found.fixed)}, broken {len(found.broken)} "
                  f"(McNemar {'n/a' if found.p is None else p_text(found.p)})", highlight=False)
    if found.tag_fixed or found.tag_broken:  # the tag moved: its own agreement and test, beside pass/fail's
        for name, side in figures:
            console.print(f"  {name:<10} the same tag {shown(tag_agreement_text(side))}", highlight=False)
        console.print(f"  the tag: fixed {len(found.tag_fixed)}, broken {len(found.tag_broken)} "
                      f"(McNemar {'n/a' if found.tag_p is None else p_text(found.tag_p)})", highlight=False)
    if found.unjudged:
        console.print(f"  [yellow]{found.unjudged} labels got no verdict from one of them[/] and are left out.")
    console.print("  " + verdict_text(found), highlight=False)
    for title, changes in (("fixed", found.fixed), ("broken", found.broken), ("tag fixed", found.tag_fixed),
                           ("tag broken", found.tag_broken)):
        for change in changes[:CHANGES_SHOWN]:
            console.print(f"  {title} row {change.line}: people {shown(change.human)}; before {shown(change.before)},"
                          f" after {shown(change.after)} · {shown(' '.join(change.question.split())[:70])}",
                          highlight=False)
