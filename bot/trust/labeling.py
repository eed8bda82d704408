"""A person's label of a judgment saved, the one way every face saves it (Slack's Correct it and review card, the
terminal's review, a file's human_ columns, an imported file): what the rubric makes of it, kept one per person and
case, and the case closed in the review queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.store import Judgment, Store
from bot.trust.labels import Completed, HumanValues, complete

if TYPE_CHECKING:
    from bot.rubric import Rubric

CORRECTION, FILE = "correction", "file"  # where a label came from: a person's own (any face), or a file's cells


def label_case(store: Store, judgment: Judgment, rubric: Rubric, human: HumanValues, *, user_id: str,
               source: str = CORRECTION, note: str | None = None) -> tuple[Completed, bool]:
    """Keep `user_id`'s label of the judgment's case (replacing their earlier one; the first label of a queued case
    closes it): (the label as the rubric reads it, whether it replaced one). The person's values are kept even when
    the rubric's formulas cannot read them (the figures are then unknown)."""
    from bot.store import save_label  # the labels' queries: loaded when a label is saved, not by every file's run

    label = complete(human, rubric)
    replaced = save_label(store, judgment=judgment, user_id=user_id, source=source, values=label.values,
                          passed=label.passed, pass_from=label.pass_from, tag=label.tag, headline=label.headline,
                          note=note)
    return label, replaced
