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
    from bot.trust.align import AlignCase, AlignReport
    from bot.trust.drift import CheckCase

CHANGES_SHOWN = 10  # fixed and broken cases listed each


async def align(ctx: Context) -> int:
    """Build the candidate from the labels, judge the held-out cases with the rubric and the candidate, report and
    write the candidate."""
    from bot.trust.align import MIN_CORRECTIONS, MIN_LABELS, candidate_rubric, disagrees, folds_of, pick_examples, report

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
    aligned = folds_of(cases, rubric, args.folds)
    settled()
    before = await _judged(ctx, rubric, [case.case for case in aligned], "the rubric as it is",
                           lead=f"Aligning {rubric.name} on {len(aligned)} labeled cases: first the rubric as it is "
                                "(the candidate then judges each case once more)")
    if before is None:
        return EXIT_USAGE
    corrections = [case for case in aligned if disagrees(before.get(case.line), case.human)]
    if len(corrections) < MIN_CORRECTIONS:
        console.print(f"The judge disagrees with people on {len(corrections)} of {len(aligned)} labeled cases: too "
                      f"few corrections to learn from (it takes {MIN_CORRECTIONS}). Nothing written.", highlight=False)
        return EXIT_USAGE
    after: dict[int, Judgment] = {}
    for fold in range(args.folds):
        held_out = [case for case in aligned if case.fold == fold]
        examples = pick_examples([case for case in corrections if case.fold != fold], rubric, args.examples)
        if not held_out:
            continue
        judged = await _judged(ctx, candidate_rubric(rubric, examples), [case.case for case in held_out],
                               f"fold {fold + 1} of {args.folds}", quiet=True,
                               lead=f"Fold {fold + 1} of {args.folds}: {len(held_out)} held-out cases with "
                                    f"{len(examples)} examples from the other folds")
        if judged is None:
            return EXIT_USAGE
        after.update(judged)
    found = report(aligned, before, after, rubric, len(corrections))
    _show(ctx, rubric, found)
    path = _write(ctx, rubric, corrections, found)
    console.print(f"The candidate is in {shown(str(path))}; {shown(rubric.name)} in use is unchanged. Judge with it "
                  f"as `--rubric {shown(path.stem)}` once its folder is RUBRICS_DIR.", highlight=False)
    return EXIT_OK


async def _judged(ctx: Context, rubric: Rubric, cases: list[CheckCase], what: str, *, lead: str,
                  quiet: bool = False) -> dict[int, Judgment] | None:
    """The cases judged with `rubric` as a run of its own kept out of every figure (its estimate agreed first);
    None when it was not."""
    panel = check_panel(ctx, rubric)
    run = start_check(ctx, rubric, cases, panel, source_name=f"align {rubric.name}: {what}")
    go, budget = await cost_agreed(ctx, run, rubric, panel, new=True, quiet=quiet, lead=lead)
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


def _write(ctx: Context, rubric: Rubric, corrections: list[AlignCase], found: AlignReport) -> Path:
    """The candidate with examples from every correction, as a rubric file of its own name and the next version;
    people's notes as guidelines to consider, commented out."""
    import yaml

    from bot.trust.align import candidate_rubric, guidelines_from, next_version, pick_examples

    examples = pick_examples(corrections, rubric, ctx.args.examples)
    name = f"{rubric.name}-aligned"
    candidate = candidate_rubric(rubric, examples, name=name, version=next_version(rubric.version))
    data = candidate.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude={"examples"})
    data["examples"] = [example.model_dump(mode="json", exclude_none=True) for example in examples]
    notes = guidelines_from([case.note for case in corrections])
    header = [f"# {name} {candidate.version}: {rubric.name} {rubric.version} with {len(examples)} examples from people's "
              f"corrections (judgebot align, {date.today().isoformat()}).",
              f"# Held out by {ctx.args.folds}-fold cross-validation over {found.n} labeled cases: agreement "
              f"{_share(found.before.agreement)} -> {_share(found.after.agreement)}, fixed {len(found.fixed)}, "
              f"broken {len(found.broken)}."]
    if notes:
        header.append("# People's notes, to consider as guidelines (a guideline is not measured until it is in use):")
        header += [f"#   - {' '.join(note.split())}" for note in notes]
    folder = ctx.args.out or ctx.settings.rubrics_dir or Path.cwd()
    path = folder / f"{name}.yaml" if folder.is_dir() or folder.suffix not in (".yaml", ".yml") else folder
    path.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)
    path.write_text("\n".join(header) + "\n" + body, encoding="utf-8")
    return path


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"
