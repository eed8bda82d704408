"""`judgebot review` as a `--json` document: the cases of a review queue that wait for a person's label."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.cli.json_output import Document, UtcTime

if TYPE_CHECKING:
    from bot.store import Judgment, ListedJudgment, ReviewCase
    from bot.store import WaitingCase as QueuedCase


class WaitingCase(Document):
    """A case waiting for a label, with the verdict that sent it to review."""

    judgment_id: int
    """The verdict's judgment id."""
    queued_at: UtcTime
    """When it was queued."""
    reason: str
    """Why: disagree (the judge and a person's label disagree), split (the jury split), unsure (the samples split),
    random (picked at random) or inconsistent (a pairwise winner changed with the order of the answers)."""
    at_random: bool
    """Picked at random from its run's scored rows (whatever else also sent it)."""
    rubric: str
    """The rubric's name."""
    model: str | None
    """The model under test."""
    question: str
    """The question."""
    judge_label: str | None
    """The judge's verdict in words."""
    judge_passed: bool | None
    """Whether the judge passed it."""
    judge_headline: float | None
    """The judge's headline, 0 to 100."""


class ReviewDocument(Document):
    """`judgebot review --json`: the open cases of a Slack channel's review queue (or the terminal's), oldest first."""

    channel: str | None
    """The Slack channel id; null: the terminal's queue."""
    cases: list[WaitingCase]
    """The cases."""

    @classmethod
    def of(cls, channel: str | None,
           cases: Iterable[tuple[ReviewCase | QueuedCase, Judgment | ListedJudgment]]) -> ReviewDocument:
        """The queue's open cases, as `open_cases` (or `waiting_cases`) gives them."""
        return cls(channel=channel, cases=[
            WaitingCase(judgment_id=judgment.id, queued_at=case.created_at, reason=case.reason, at_random=case.random,
                        rubric=case.rubric_name, model=judgment.model_name, question=judgment.question,
                        judge_label=judgment.label, judge_passed=judgment.passed, judge_headline=judgment.headline)
            for case, judgment in cases])
