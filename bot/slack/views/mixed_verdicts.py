"""What the verdicts behind a channel's figures mix (several judge models, several texts of a rubric), said beside
the figures: a case counts once, with its latest verdict, whichever judge gave it."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block

from bot.slack.text import shown
from bot.slack.views.blocks import context
from bot.store import Figures

SHOWN = 5  # model and rubric pairs named; the rest are counted
LINE_ROOM = 450  # characters of one pair's line: five fit a context block's 3,000 beside the sentence


def mixed_blocks(figures: Sequence[Figures]) -> list[Block]:
    """A context block naming each model and rubric whose counted verdicts mix judges or rubric texts; none when
    none does."""
    mixed = [f for f in figures if f.mixed]
    if not mixed:
        return []
    lines = [shown(f"{f.model_name or 'model not named'} · {f.rubric_name}: {'; '.join(f.mixed)}", LINE_ROOM)[0]
             for f in mixed[:SHOWN]]
    more = f" (and {len(mixed) - SHOWN} more)" if len(mixed) > SHOWN else ""
    return [context(":warning: these figures mix verdicts of different judges or rubric texts, each case counted "
                    f"once with its latest verdict{more}: " + " · ".join(lines))]
