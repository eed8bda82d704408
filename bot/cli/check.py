"""`judgebot calibration check`: the labeled rows judged again by today's judge as a run of its own, its agreement
with the labels beside that of the judges that made the labeled verdicts, and an exit code a CI job can gate on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.context import Context, settled
from bot.cli.exits import EXIT_OK, EXIT_UNSCORED, EXIT_USAGE
from bot.cli.judging import cancelled, cost_agreed, terminal_origin
from bot.cli.panels import judge_panel
from bot.cli.views.calibration import HOW_TO_LABEL, show_check
from bot.cli.views.terminal_text import shown
from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.judge.panel import Panel
    from bot.rubric import Rubric
    from bot.runs import Budget, Origin
    from bot.store import Judgment, Run
    from bot.trust.drift import CheckCase

EXIT_BELOW = EXIT_UNSCORED  # a check below --min-agreement fails like a run with rows left unscored


async def check(ctx: Context) -> int:
    """Judge the labeled rows again and compare today's judge with the labels."""
    from bot.trust.drift import MIN_AGREEMENT, MIN_LABELS, Gate, check_figures

    args, settings, console = ctx.args, ctx.settings, ctx.console
    if args.labels is None and args.channel is None:
        raise UsageError("say which labeled rows to check: give --labels FILE (such as one `judgebot labels export` "
                         "wrote) or --channel ID (the labeled judgments of a Slack channel)")
    if args.labels is not None and args.channel is not None:
        raise UsageError("give --labels FILE (such as one `judgebot labels export` wrote) or --channel ID, not both")
    if args.since is not None:
        raise UsageError("--since belongs to `judgebot calibration`; a check judges every labeled row it is given")
    gate = Gate(MIN_AGREEMENT if args.min_agreement is None else args.min_agreement,
                MIN_LABELS if args.min_labels is None else args.min_labels, args.min_kappa, args.point)
    if not 0 <= gate.min_agreement <= 1:
        raise UsageError("--min-agreement is a share from 0 to 1, such as 0.8")
    if gate.min_labels < 0 or (gate.min_kappa is not None and not -1 <= gate.min_kappa <= 1):
        raise UsageError("--min-labels is a count, --min-kappa a kappa from -1 to 1, such as 0.6")
    rubric = ctx.rubrics.get(args.rubric)
    cases = check_cases(ctx, rubric)
    if not cases:
        raise UsageError(f"no labeled rows of {rubric.name} to check. {HOW_TO_LABEL}")
    panel = check_panel(ctx, rubric)
    settled()
    run = start_check(ctx, rubric, cases, panel,
                      source_name=args.labels.name if args.labels else f"channel {args.channel}")
    # As any run: what it will send is estimated (the history's verdicts and identical rows spare some), and
    # CONFIRM_ABOVE_USD and JUDGE_MONTHLY_BUDGET hold; above CALIBRATION_CONFIRM_ROWS it asks too.
    go, budget = await cost_agreed(ctx, run, rubric, panel, new=True, batch=args.batch,
                                   lead="Judging the labeled rows again")
    if go and not confirmed(len(cases), settings.calibration_confirm_rows, args.yes, console):
        await cancelled(ctx, run, panel)
        go = False
    if not go:
        return EXIT_USAGE
    async with panel:
        judged = await judge_again(ctx, run, rubric, panel, budget=budget)
    current, original = check_figures(cases, judged, rubric)
    if args.json:
        from bot.cli.json_output import print_json
        from bot.cli.json_output.calibration import CalibrationCheckDocument

        print_json(CalibrationCheckDocument.of(current, original, gate, cases=len(cases), rubric=rubric.name,
                                               rubric_version=rubric.version, labels_from=labels_from(ctx), run=run.id,
                                               judges=judges_of(panel)))
        return EXIT_OK if gate.passes(current) else EXIT_BELOW
    unscored = len(cases) - current.n
    if unscored:
        console.print(f"[yellow]{unscored} rows got no verdict[/] (a judge error or an invalid reply) and are left out.")
    today = shown(f"Today's judge: {judges_of(panel)}, {rubric.name} {rubric.version}")
    before = None if original is None else (
        shown(f"The labeled verdicts' judges: {', '.join(original.judge_models)}"), original)
    show_check(console, (today, current), before, gate)
    return EXIT_OK if gate.passes(current) else EXIT_BELOW


def check_cases(ctx: Context, rubric: Rubric) -> list[CheckCase]:
    """The labeled rows a check judges: from the labels file (saying what it leaves out), else from the channel's
    labeled judgments."""
    from bot.trust.drift import cases_from_file, cases_from_history
    from bot.trust.labels import ambiguity_text, unknown_text

    if ctx.args.labels is None:
        return cases_from_history(ctx.store, rubric, ctx.args.channel)
    found = cases_from_file(ctx.args.labels, rubric)
    for header in found.unknown:
        ctx.console.print(f"[yellow]warning[/]: {shown(unknown_text(header, found.meant.get(header), rubric.name))}",
                          highlight=False)
    for header, fields in found.ambiguous:
        ctx.console.print(f"[yellow]warning[/]: {shown(ambiguity_text(header, fields))}")
    for header, read in found.repeated:
        ctx.console.print(f"[yellow]warning[/]: column {shown(header)} names the same label as column {shown(read)}, "
                          "which is read (the leftmost of them); it is not read")
    for line, malformed, reason in found.left_out:
        what = "skipped" if malformed else "label not read"
        ctx.console.print(f"[yellow]row {line}[/] {what}: {shown(reason)}")
    return found.cases


def labels_from(ctx: Context) -> str:
    """Where a check's labels come from: the labels file's name, or the Slack channel id."""
    return ctx.args.labels.name if ctx.args.labels is not None else str(ctx.args.channel)


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
    from bot.records import CHECK_CHANNEL

    return terminal_origin().model_copy(update={"source": "check", "channel_id": CHECK_CHANNEL})


def check_panel(ctx: Context, rubric: Rubric) -> Panel:
    """Today's judges as `judgebot judge` would ask them (--judges, --judges-file, the configured jury, else
    JUDGE_MODEL; --samples), or the one judge --judge-model names."""
    args, settings = ctx.args, ctx.settings
    if args.judge_model:
        if args.judges or args.judges_file:
            raise UsageError("give --judge-model (one judge) or --judges / --judges-file (a jury), not both")
        settings = settings.model_copy(update={"judge_model": args.judge_model, "judges": "", "judges_file": None})
    return judge_panel(settings, args, rubric)


def start_check(ctx: Context, rubric: Rubric, cases: list[CheckCase], panel: Panel, *, source_name: str) -> Run:
    """The cases saved as a run of their own (source "check"), each row pending."""
    from bot.runs import start_run
    from bot.trust.cases import TEXT_COLUMNS

    # Only the texts go in the run: its rows must not be read as labels again if it is ever resumed and summarised.
    return start_run(ctx.store, rubric=rubric, rows=[case.row for case in cases], columns=TEXT_COLUMNS,
                     source_name=source_name, fresh=ctx.args.fresh, origin=check_origin(), **panel.run_fields())


async def judge_again(ctx: Context, run: Run, rubric: Rubric, panel: Panel, *,
                      budget: Budget | None) -> dict[int, Judgment]:
    """Judge a check's run (its estimate agreed to: `budget` None when it may go past the monthly budget) through the
    engine with a progress bar, live or (with --batch) through the Batch API; the judgments by row number."""
    from bot.cli.face import Terminal, engine_of
    from bot.errors import RunStopped
    from bot.records import RunState
    from bot.runs import Limits, Request, Tier
    from bot.store import iter_judgments

    store, settings = ctx.store, ctx.settings
    request = Request(rubric, panel, run, limits=Limits.of_terminal(settings), agreed=True, past_budget=budget is None,
                      tier=Tier.BATCH if ctx.args.batch else Tier.LIVE, concurrency=settings.concurrency, end=False)
    outcome = (await engine_of(ctx).judge(request, Terminal(ctx, new=False, what="check run"))).outcome
    if outcome is not None and outcome.status == RunState.PAUSED:
        raise RunStopped(f"{(outcome.stop_reason or 'the judge stopped').rstrip('.')}. The check is incomplete: "
                         "run it again once the judge answers")
    return {judgment.row_number: judgment for judgment in iter_judgments(store, run.id)
            if judgment.row_number is not None}
