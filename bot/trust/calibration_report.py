"""`judgebot calibration`'s report, the same in the web view and the Python API: people's labels of a rubric held
against the judge configured now and the rubric file loaded (the digest's trust report, bot.trust.report, needs no
judge's settings)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.trust.report import JudgeInUse, RubricTrust, TrustBar, rubric_trust

if TYPE_CHECKING:
    from bot.rubric import Rubric
    from bot.store import Store


def calibration_report(store: Store, settings: Settings, rubric: Rubric, *, channel: str | None = None,
                       judge_model: str | None = None, since: datetime | None = None) -> RubricTrust:
    """`judgebot calibration`'s figures, the same in the web view: how far the judge agrees with people's labels of
    a rubric (of one channel, else everywhere; of one judge's verdicts; since a moment), held against the judge
    configured now and the rubric file loaded."""
    from bot.judge.panel import configured_judge_name  # the judge's settings read, not its client

    now = JudgeInUse(configured_judge_name(settings), rubric.content_hash, rubric.version)
    return rubric_trust(store, rubric_name=rubric.name, rubric=rubric, channel_id=channel, team_id=None, since=since,
                        bar=TrustBar.from_settings(settings), judge_model=judge_model, everywhere=channel is None,
                        now=now)
