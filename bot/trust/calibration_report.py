"""`judgebot calibration`'s report, the same in the web view and the Python API: people's labels of a rubric held
against the judge configured now and the rubric file loaded (the digest's trust report, bot.trust.report, needs no
judge's settings). A report is kept while nothing it is read from changes, and read again when anything does."""

from __future__ import annotations

import copy
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from datetime import datetime
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.trust.collector import collector_held
from bot.trust.report import JudgeInUse, RubricTrust, TrustBar, rubric_trust

if TYPE_CHECKING:
    from bot.rubric import Rubric
    from bot.store import Store

KEPT = 32  # reports kept a store (a view's rubrics, channels and periods); the least recently asked goes first
_kept: weakref.WeakKeyDictionary[Store, OrderedDict[Hashable, RubricTrust]] = weakref.WeakKeyDictionary()
_keeping = threading.Lock()


def calibration_report(store: Store, settings: Settings, rubric: Rubric, *, channel: str | None = None,
                       judge_model: str | None = None, since: datetime | None = None) -> RubricTrust:
    """`judgebot calibration`'s figures, the same in the web view: how far the judge agrees with people's labels of
    a rubric (of one channel, else everywhere; of one judge's verdicts; since a moment), held against the judge
    configured now and the rubric file loaded.

    The same question asked again of the same history is answered from the report kept the first time, exactly as
    reading it again would: it is kept under what it was asked and the store's `trust_state`, which any label, vote,
    review case or judgment given, changed or scored since changes, whichever process wrote it. A period ("the last
    30 days", a moment that moves) is kept under the first label and vote it leaves in, which stay the same while no
    label or vote falls out of it. Read anew, the labels and votes that read as before are taken as kept
    (`labeled_items`): after a vote, only its judgment is looked up.
    """
    from bot.judge.panel import configured_judge_name  # the judge's settings read, not its client
    from bot.store import first_given, trust_state

    now = JudgeInUse(configured_judge_name(settings), rubric.content_hash, rubric.version)
    bar = TrustBar.from_settings(settings)
    period = None if since is None else first_given(store, since)
    key = (rubric.name, now, bar, channel, judge_model, period, trust_state(store))
    with _keeping:
        reports = _kept.setdefault(store, OrderedDict())
        kept = reports.get(key)
        if kept is not None:
            reports.move_to_end(key)
            return copy.deepcopy(kept)
    with collector_held():
        report = rubric_trust(store, rubric_name=rubric.name, rubric=rubric, channel_id=channel, team_id=None,
                              since=since, bar=bar, judge_model=judge_model, everywhere=channel is None, now=now)
    with _keeping:
        reports[key] = copy.deepcopy(report)
        while len(reports) > KEPT:
            reports.popitem(last=False)
    return report
