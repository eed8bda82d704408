"""The review queue as people work it: the next case offered to a person (blind where the channel is), the queue's
state in a line, and agreement over the cases picked at random (what goes to the queue: bot.trust.review)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot.store import (
    ANY_TEAM,
    Judgment,
    QueueState,
    ReviewCase,
    Store,
    get_judgment,
    offer_next,
    random_share_pairs,
    review_setup,
    skip_case,
)
from bot.trust.calibration import Agreement
from bot.trust.calibration_texts import agreement_text

if TYPE_CHECKING:
    from bot.rubric import Rubric

OFFERS = 5  # cases looked at per request for the next one before giving up on those whose rubric is not loaded


def queue_text(state: QueueState) -> str:
    """"Review queue: 12 open, the oldest waiting since 19 Nov; 8 labeled this week"."""
    oldest = f", the oldest waiting since {state.oldest.day} {state.oldest:%b}" if state.oldest else ""
    return f"Review queue: {state.open:,} open{oldest}; {state.labeled:,} labeled this week"


def random_share_text(share: Agreement, all_labels: float | None = None) -> str:
    """"random sample: 88% (44/50), 95% CI 76%-94% (Wilson); all labels: 81%", or that there is none yet."""
    if not share.pass_n:
        return "random sample: no labels yet (`/judge review` asks for them)"
    besides = f"; all labels: {all_labels:.0%}" if all_labels is not None else ""
    return f"random sample: {agreement_text(share)}{besides}"


def random_share(store: Store, *, rubric_name: str, channel_id: str | None, team_id: str | None,
                 since: datetime | None = None, everywhere: bool = False, judge_model: str | None = None) -> Agreement:
    """Agreement on pass/fail over the labels of the cases of a channel (or `everywhere`) picked at random for review:
    the cases nobody chose. A channel named without its workspace (team_id None) is read in whichever it is."""
    team = ANY_TEAM if team_id is None and channel_id is not None else team_id
    pairs = random_share_pairs(store, team_id=team, channel_id=channel_id, rubric_name=rubric_name, since=since,
                               everywhere=everywhere, judge_model=judge_model)
    by_case: dict[str, Counter[tuple[bool, bool]]] = {}
    for key, judge, person in pairs:
        by_case.setdefault(key, Counter())[judge, person] += 1
    return Agreement.counted(len(pairs), Counter((judge, person) for _, judge, person in pairs),
                             list(by_case.values()))


@dataclass(frozen=True)
class Offered:
    """The next case of a queue, now offered to one person: the verdict that queued it, the rubric it was judged with
    and whether the channel reviews blind (the judge's verdict shown only once the person's label is saved)."""

    case: ReviewCase
    judgment: Judgment
    rubric: Rubric
    blind: bool


def next_case(store: Store, *, team_id: str | None, channel_id: str | None, user_id: str,
              rubric_of: Callable[[Judgment], Rubric | None]) -> Offered | None:
    """The next case of a channel's queue (ANY_TEAM: in whichever workspace; None, None: the terminal's) for a person,
    offered to them, the same for Slack's review card and the terminal's: a case whose rubric (that very version,
    `rubric_of`) is no longer loaded cannot be labeled, and is skipped. None when none waits for them."""
    for _ in range(OFFERS):
        case = offer_next(store, team_id=team_id, channel_id=channel_id, user_id=user_id)
        if case is None:
            return None
        judgment = get_judgment(store, case.judgment_id)
        rubric = rubric_of(judgment) if judgment is not None else None
        if judgment is None or rubric is None:
            skip_case(store, case_id=case.id, user_id=user_id)
            continue
        blind = case.channel_id is not None and review_setup(store, team_id=case.team_id or "",
                                                             channel_id=case.channel_id).blind
        return Offered(case, judgment, rubric, blind)
    return None
