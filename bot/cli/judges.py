"""`judgebot judges compare`: a candidate judge against the judge in use, on people's labeled cases and on a sample of
recent judgments, each judged as a run of its own kept out of every channel's figures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK, EXIT_USAGE
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.csvfiles.rows import CsvRow
    from bot.judge.panel import Panel
    from bot.rubric import Rubric
    from bot.runs import Budget
    from bot.store import Judgment, Run
    from bot.trust.drift import CheckCase

HISTORY = 200  # recent judgments the candidate judges again when --history does not say


async def compare(ctx: Context) -> int:
    """Judge the labeled cases and a sample of recent judgments with the judge in use and the candidate; show both
    against people, and against each other."""
    from bot.cli.check import check_cases
    from bot.cli.views.judge_comparison import show_comparison
    from bot.trust.judge_comparison import history_side, labeled_side

    args, console = ctx.args, ctx.console
    if args.labels is not None and args.channel is not None:
        raise UsageError("give --labels FILE (such as one `judgebot labels export` wrote) or --channel ID, not both")
    history = HISTORY if args.history is None else args.history
    if history < 0:
        raise UsageError("--history is a count of recent judgments, such as 200 (0: none)")
    rubric = ctx.rubrics.get(args.rubric)
    old, new = judge_in_use(ctx), args.to.strip()
    if not new:
        raise UsageError("--to names the candidate judge model, such as gpt-5.4-mini")
    if old == new:
        raise UsageError(f"{old} is the judge in use already: --to names another model to compare it with "
                         "(--from names the judge in use when it is not JUDGE_MODEL)")
    cases = renumbered(check_cases(ctx, rubric)) if args.labels is not None or args.channel is not None else []
    sample = sample_rows(ctx, rubric, history, first=len(cases) + 1)
    if not cases and not sample:
        raise UsageError(f"nothing to compare {shown(old)} and {shown(new)} on: no labeled cases of {rubric.name} and "
                         "no recent judgments of it here. Give --channel ID or --labels FILE")
    settled()
    rows = [case.row for case in cases] + sample
    console.print(shown(f"Comparing judges on {rubric.name} {rubric.version}: {old} (in use) and {new} (candidate), "
                        f"on {len(cases)} labeled cases and {len(sample)} recent judgments"), highlight=False)
    judged = await judge_both(ctx, rubric, rows, old, new)
    if judged is None:
        return EXIT_USAGE
    before, after = judged
    labeled = labeled_side(cases, before, after, rubric) if cases else None
    history = history_side(sample, before, after)
    labels_from = args.labels.name if args.labels else args.channel or ""
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.judges import AgainstEachOther, AgainstPeople, JudgesCompareDocument

        print_json(JudgesCompareDocument(
            rubric=rubric.name, rubric_version=rubric.version, judge_in_use=old, candidate=new,
            labeled_cases=len(cases), recent_judgments=len(sample),
            against_people=None if labeled is None else AgainstPeople.of(labeled, labels_from),
            against_each_other=AgainstEachOther.of(history)))
        return EXIT_OK
    show_comparison(console, old, new, labeled, history, labels_from=shown(labels_from))
    return EXIT_OK


def judge_in_use(ctx: Context) -> str:
    """The judge to compare against: --from, else the channel's own judge, else JUDGE_MODEL."""
    from bot.store import judge_of_channel

    if ctx.args.from_model:
        return str(ctx.args.from_model).strip()
    return judge_of_channel(ctx.store, team_id=None, channel_id=ctx.args.channel) or ctx.settings.judge_model


def renumbered(cases: list[CheckCase]) -> list[CheckCase]:
    """The labeled cases with their rows numbered 1, 2, ... (a labels file's own lines have gaps)."""
    from dataclasses import replace

    return [replace(case, row=replace(case.row, line=number)) for number, case in enumerate(cases, start=1)]


def sample_rows(ctx: Context, rubric: Rubric, limit: int, *, first: int) -> list[CsvRow]:
    """A random sample of the channel's (or the terminal's) recent judgments of the rubric, as rows numbered from
    `first`: their texts only."""
    from bot.csvfiles.rows import CsvRow
    from bot.records import context_of
    from bot.store import recent_sample

    if limit == 0:
        return []
    found = recent_sample(ctx.store, rubric_name=rubric.name, channel_id=ctx.args.channel, limit=limit)
    return [CsvRow(line=first + index, question=judgment.question, reference=judgment.reference,
                   answer=judgment.answer, model=judgment.model_name, cells={},
                   context=context_of(judgment.context) if rubric.uses_context else None)
            for index, judgment in enumerate(found)]


def one_judge(ctx: Context, model: str) -> Panel:
    """A panel of `model` alone, asked once per row, on the configured endpoint."""
    from bot.cli.panels import NO_ENDPOINT
    from bot.judge.panel import JudgeSpec, open_panel

    if not ctx.settings.has_judge_endpoint():
        raise UsageError(NO_ENDPOINT)
    return open_panel(ctx.settings, specs=[JudgeSpec(model=model)])


async def judge_both(ctx: Context, rubric: Rubric, rows: list[CsvRow], old: str,
                     new: str) -> tuple[dict[int, Judgment], dict[int, Judgment]] | None:
    """The rows judged by the judge in use and by the candidate, each a run kept out of every figure; both estimates
    are shown and agreed to before either judges (verdicts the history holds are reused, not billed). None when
    they are not agreed to."""
    from bot.cli.check import judge_again
    from bot.cli.judging import cost_agreed

    panels = (one_judge(ctx, old), one_judge(ctx, new))
    runs = [start_compare(ctx, rubric, rows, panel, f"compare {old} with {new}: {panel.name}") for panel in panels]
    budgets: list[Budget | None] = []
    try:
        for index, lead in enumerate((f"The judge in use, {old}", f"The candidate, {new}")):
            go, budget = await cost_agreed(ctx, runs[index], rubric, panels[index], new=True, lead=lead,
                                           batch=ctx.args.batch)
            if not go:
                return None
            budgets.append(budget)  # both draw on one monthly budget: the second's is what the first leaves of it
    finally:
        if len(budgets) < len(runs):  # one was refused (that one is cancelled): neither is judged
            await cancel_left(ctx, runs, panels)
    judged = []
    for run, panel, budget in zip(runs, panels, budgets, strict=True):
        async with panel:
            judged.append(await judge_again(ctx, run, rubric, panel, budget=budget))
    return judged[0], judged[1]


async def cancel_left(ctx: Context, runs: list[Run], panels: tuple[Panel, Panel]) -> None:
    """Compare runs not to be judged: those not cancelled yet are, and their connections closed."""
    from bot.records import RunState
    from bot.store import COST_NOT_AGREED, get_run, update_run

    for run, panel in zip(runs, panels, strict=True):
        current = get_run(ctx.store, run.id)
        if current is not None and current.status != RunState.CANCELLED:
            await panel.aclose()
            update_run(ctx.store, run.id, status=RunState.CANCELLED, stop_reason=COST_NOT_AGREED)


def start_compare(ctx: Context, rubric: Rubric, rows: list[CsvRow], panel: Panel, source_name: str) -> Run:
    """The rows saved as a run of one judge, under the check runs' channel key: no channel counts them."""
    from bot.cli.check import check_origin
    from bot.runs import start_run
    from bot.trust.cases import TEXT_COLUMNS

    return start_run(ctx.store, rubric=rubric, rows=rows, columns=TEXT_COLUMNS, source_name=source_name[:200],
                     fresh=ctx.args.fresh, origin=check_origin(), **panel.run_fields())
