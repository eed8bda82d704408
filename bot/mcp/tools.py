"""What the MCP tools do, for a caller who may read some channels: grade one triple (with its retrieved passages, for a
rubric that reads them) through a run of one row (the history, the budget and the cache as `judgebot judge -q -r -a`),
list the rubrics, and a channel's stats and
calibration."""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bot.config import Settings
from bot.errors import UsageError
from bot.figures import money
from bot.judge.lifetime import shutdown_advice
from bot.records import RunState, Triple
from bot.rubric import RubricSet
from bot.runs import Face
from bot.store import Run, Store, channel_stats, cost_limits, recent_in_channel, update_run, utcnow

if TYPE_CHECKING:
    from bot.runs import Limits, Question
    from bot.store import Figures

MAX_DAYS = 3660  # ten years: as far back as `stats` reads
RAISE_IN_SLACK = "Raise it with /judge budget in your conversation with judgebot"
TERMINAL = "terminal"  # how a caller names the terminal's judgments (and the agents'), which belong to no channel
CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,31}")  # a public or private channel, or a direct conversation


@dataclass(frozen=True)
class Caller:
    """Who calls the tools: a name for the history, the Slack channels whose figures it may read (None: every channel,
    as the person at this machine may), and where its own grades belong (`home`; None: with the terminal's).

    A Slack person (Slackbot's caller) has a home in their workspace, their direct conversation with judgebot, and
    reads the channels they are in there, never the terminal's judgments."""

    name: str
    channels: frozenset[str] | None = None
    home: str | None = None
    team_id: str | None = None
    user_id: str | None = None
    why_not: str = "MCP_CHANNELS lists the channels a token may read"

    def channel(self, asked: str | None) -> str | None:
        """The channel key `asked` names (None or "": the caller's home; "terminal": the terminal's), if this caller
        may read it."""
        if asked is None or not asked.strip():
            return self.home
        channel = asked.strip()
        if channel == TERMINAL:
            if self.home is not None:
                raise UsageError(f"the {TERMINAL}'s judgments are not for a Slack person to read: name a channel you "
                                 "are in, or none for your conversation with judgebot")
            return None
        if self.channels is not None and channel not in self.channels:
            raise UsageError(f"this caller may not read channel {channel!r}; {self.why_not}")
        return channel


class Graded(BaseModel):
    """One triple's verdict, as the history keeps it."""

    status: str  # scored, invalid or error
    headline: float | None = None
    passed: bool | None = None
    tag: str | None = None
    label: str | None = None
    output: dict[str, Any] | None = None  # the judge's reply, in the rubric's fields (its reasoning among them)
    error: str | None = None
    samples: int | None = None  # with several samples: how many, how far they agreed, and whether to doubt it
    agreement: float | None = None
    spread: float | None = None
    unsure: bool | None = None
    judge_model: str
    rubric: str
    run_id: int
    cost_usd: float | None = None
    warnings: list[str] = []  # the judge's announced shutdown, when it is near: compare a successor before then
    passages: int | None = None  # how many retrieved passages the judge read (None: the grade had no context)
    flags: list[str] = []  # the injection screen's warnings about the texts ("possible prompt injection in passage 2
    # of the context"): they never change the verdict


class RubricInfo(BaseModel):
    """A rubric a grade may name."""

    name: str
    title: str
    version: str
    description: str
    kind: str
    fields: list[str]
    tags: list[str]
    needs_context: bool = False  # the rubric grades against retrieved passages: `grade` needs `context`


@dataclass
class Tools:
    """The tools over one history, one set of rubrics and the settings' judge."""

    settings: Settings
    store: Store
    rubrics: RubricSet

    async def grade(self, caller: Caller, *, question: str, reference: str, answer: str, rubric: str,
                    samples: int | None = None, model: str | None = None,
                    context: list[str] | None = None) -> Graded:
        """Judge one triple live with the configured judge, `samples` times (the rubric's own number by default),
        with the passages retrieved for it (`context`) for a rubric that reads them. An agent cannot be asked to
        agree: what the budget rule would ask a person about is refused."""
        from bot.judge.panel import open_panel
        from bot.runs import Engine, Origin, Request, Rows

        chosen = self.rubrics.get(rubric)
        if chosen.pairwise:
            raise UsageError(f"{chosen.name} compares two answers; grade takes one answer: name another rubric")
        if not question.strip() or (chosen.uses_reference and not reference.strip()):
            raise UsageError("a judgment needs a question and a reference answer to grade against")
        if chosen.uses_context and context is None:
            raise UsageError(f"{chosen.name} grades the answer against the passages retrieved for the question: give "
                             "them as `context` (a list of strings in the order retrieved; a string is one passage)")
        if context is not None and not chosen.uses_context:
            raise UsageError(f"{chosen.name} does not read retrieved context (its template has no $context): leave "
                             "`context` out, or name a rubric that grades against the passages (see `rubrics`)")
        panel = open_panel(self.settings, samples=samples or chosen.samples)
        triple = Triple(question=question, reference=reference, answer=answer, context=context)
        origin = Origin(source="mcp", user_id=caller.user_id or caller.name[:32], team_id=caller.team_id,
                        channel_id=caller.home)
        # A Slack person has no terminal to resume a paused grade from: it ends as an error, nothing left to bill.
        limits, threshold = await asyncio.to_thread(self._limits, caller)
        request = Request(chosen, panel, Rows(triple, origin, model_name=(model or "").strip() or None),
                          limits=limits, resumable=caller.home is None)
        face = _Agent()  # the engine works off the event loop: an HTTP server answers other agents meanwhile
        try:
            ended = await Engine.from_settings(self.store, self.settings).judge(request, face)
        except BaseException:  # failed or dropped by the agent: nothing is left for a later resume to bill
            if face.run is not None:
                await asyncio.to_thread(update_run, self.store, face.run.id, status=RunState.CANCELLED,
                                        stop_reason="the agent's grade did not finish")
            raise
        run, outcome = ended.run, ended.outcome
        if outcome is None:
            assert ended.question is not None
            raise UsageError(refusal(ended.question, threshold, slack=caller.home is not None))
        if outcome.status == RunState.PAUSED:
            reason = (outcome.stop_reason or "the judge stopped").rstrip(".")
            if caller.home is not None:
                raise UsageError(f"{reason}. Nothing was scored: ask again later.")
            raise UsageError(f"{reason}. The triple is kept as run {run.id}: `judgebot resume {run.id}` judges it.")
        judgment = ended.end.judgment if ended.end is not None else None
        if judgment is None:
            raise UsageError(f"run {run.id} ended without judging its triple ({outcome.stop_reason or outcome.status})")
        return Graded(status=judgment.status, headline=judgment.headline, passed=judgment.passed, tag=judgment.tag,
                      label=judgment.label, output=judgment.output, error=judgment.error, samples=judgment.samples,
                      agreement=judgment.agreement, spread=judgment.spread, unsure=judgment.unsure,
                      judge_model=judgment.judge_model, rubric=chosen.name, run_id=run.id, cost_usd=judgment.cost_usd,
                      warnings=[shutdown_advice(found) for found in ended.end.shutdowns] if ended.end else [],
                      passages=None if context is None else len(context), flags=list(judgment.flags or []))

    def _limits(self, caller: Caller) -> tuple[Limits, str]:
        """What a grade is held to, and the name of its threshold: a Slack person's grades count against their
        conversation with judgebot (its `/judge budget`), the others' against the terminal's CONFIRM_ABOVE_USD and
        JUDGE_MONTHLY_BUDGET."""
        from bot.runs import Limits

        terminal = Limits.of_terminal(self.settings)
        if caller.home is None:
            return terminal, "CONFIRM_ABOVE_USD"
        limits = cost_limits(self.store, team_id=caller.team_id or "", channel_id=caller.home)
        own = limits.confirm_above is not None
        return (Limits(confirm_above=limits.confirm_above if own else terminal.confirm_above,
                       confirm_above_requests=terminal.confirm_above_requests, monthly=limits.monthly_budget,
                       channel_id=caller.home, how_to_raise=RAISE_IN_SLACK),
                "its /judge budget confirmation threshold" if own else "CONFIRM_ABOVE_USD")

    def rubric_list(self) -> list[RubricInfo]:
        """Every rubric loaded."""
        return [RubricInfo(name=rubric.name, title=rubric.title, version=rubric.version,
                           description=rubric.description, kind=rubric.kind, fields=list(rubric.output),
                           tags=rubric.tags(), needs_context=rubric.uses_context) for rubric in self.rubrics]

    def stats(self, caller: Caller, *, channel: str | None, days: int, model: str | None) -> list[dict[str, Any]]:
        """Per model and rubric figures of a channel the caller may read (the terminal's by default), each case once
        with its latest verdict, under the keys of `judgebot stats --json` (see `model_figures`)."""
        if not 0 <= days <= MAX_DAYS:
            raise UsageError(f"days must be from 0 (all time) to {MAX_DAYS}")
        since = utcnow() - timedelta(days=days) if days else None
        channel_id = caller.channel(channel)
        figures = channel_stats(self.store, channel_id=channel_id, since=since, model=model or None)
        named = bool(channel and channel.strip())
        if not figures and named and channel_id is not None and not recent_in_channel(self.store,
                                                                                       channel_id=channel_id, limit=1):
            raise UsageError(unknown_channel(caller, channel_id))
        return [model_figures(found) for found in figures]

    def calibration(self, caller: Caller, *, rubric: str, channel: str | None) -> dict[str, Any]:
        """How far the judge agrees with people's labels on a rubric in a channel the caller may read."""
        from bot.trust.report import TrustBar, rubric_trust

        chosen = self.rubrics.get(rubric)
        report = rubric_trust(self.store, rubric_name=chosen.name, rubric=chosen, channel_id=caller.channel(channel),
                              team_id=caller.team_id, since=None, bar=TrustBar.from_settings(self.settings))
        figures = report.figures.model_dump(mode="json")
        figures["doubts"] = [str(doubt) for doubt in report.doubts]
        return figures


def model_figures(found: Figures) -> dict[str, Any]:
    """One model and rubric's figures under the very keys of an entry of `judgebot stats --json`'s `figures`
    (docs/json.md#modelfigures), so that an agent and a script read the same document; a figure that is not a number
    is null there too."""
    from bot.trust.report import people_agreement

    people = people_agreement(found.said)
    kappa = people.kappa_pass
    return _json_ready({
        "model": found.model_name, "rubric": found.rubric_name, "cases": found.cases, "scored_cases": found.scored,
        "passed_cases": found.passed, "error_cases": found.errors, "unsure_cases": found.unsure,
        "replaced_judgments": found.rejudged, "mean_headline": found.mean_headline, "pass_rate": found.pass_rate,
        "unsure_rate": found.unsure_rate, "tag_cases": found.tags, "cases_by_judge_model": found.judges,
        "cases_by_rubric_version": found.versions,
        "people": {"labels": people.n, "pass_fail_labels": people.pass_n, "agreeing_labels": people.pass_agree,
                   "cases": people.pass_cases, "agreement": people.agreement, "interval": people.interval,
                   "judge_pass_rate": people.judge_pass_rate, "people_pass_rate": people.human_pass_rate,
                   "judge_only_passed_cases": people.judge_only, "people_only_passed_cases": people.human_only,
                   "split_cases": people.split, "mcnemar_p": people.mcnemar_p,
                   "kappa": {"value": kappa.value, "interval": kappa.interval, "labels": kappa.n,
                             "cases": kappa.cases, "judge_one_class": kappa.judge_only,
                             "people_one_class": kappa.human_only}}})


def _json_ready(value: Any) -> Any:
    """`value` as JSON gives it: tuples as lists, a float that is not a number as None."""
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


class _Agent(Face):
    """An agent as a face of the engine: nobody to ask (what the budget rule asks about is refused), nothing shown
    until the verdict."""

    run: Run | None = None

    async def saved(self, run: Run) -> None:
        self.run = run


def refusal(question: Question, threshold: str, *, slack: bool) -> str:
    """Why a grade the budget rule would ask a person about is not judged (`threshold` names the limit above which
    it asks; `slack`: a Slack person's grade, held to their conversation's budget): an agent cannot be asked."""
    from bot.runs.budget import Ask

    estimate, weighed = question.estimate, question.weighed
    limits, cost = weighed.limits, estimate.cost_text()
    if question.asks[0] == Ask.ABOVE:
        return (f"this grade ({cost}) is more than {threshold} ({money(limits.confirm_above or 0.0)}), and an agent "
                "cannot be asked to agree")
    if question.asks[0] == Ask.UNPRICED:
        return (f"this grade ({estimate.unpriced_requests:,} requests to judges of unknown price) is more than "
                f"CONFIRM_ABOVE_REQUESTS ({limits.confirm_above_requests or 0:,}), and an agent cannot be asked to "
                "agree")
    name = "the monthly budget of your conversation with judgebot" if slack else "JUDGE_MONTHLY_BUDGET"
    return (f"this grade ({cost}) would go over {name} ({money(limits.monthly or 0.0)}): "
            f"{money(max(weighed.left or 0.0, 0.0))} is left this month")


def unknown_channel(caller: Caller, channel: str) -> str:
    """What to say of a channel named that holds no judgment: how to name one (an agent may have guessed a name)."""
    named = "" if CHANNEL_ID.fullmatch(channel) else f"{channel!r} is not a Slack channel id, and "
    terminal = "" if caller.home is not None else f", or \"{TERMINAL}\" for the judgments made here and by agents"
    return (f"{named}judgebot has no judgments in channel {channel!r}: name a channel where judgebot has judged by its "
            f"id (such as C0123ABCD, at the bottom of the channel's details){terminal}")
