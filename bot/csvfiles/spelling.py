"""Which name a person meant when they misspelled one: the closest of the names there are, by difflib's likeness."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75  # difflib's ratio: "questoin" is 0.88 like "question", "modle" 0.8 like "model", "tag" 0.29 like "pass"


def closest(words: Iterable[str], choices: Iterable[str], *, cutoff: float = CUTOFF) -> str | None:
    """The one of `choices` most like any of `words` (the first on a tie), or None when none is at least `cutoff`
    alike.

    Args:
        words: What was wanted, as it may be spelled (a role's accepted header names, or the name a person typed).
        choices: What there is (a file's headers, a rubric's label columns).
        cutoff: The least likeness (0-1) worth suggesting.
    """
    wanted = list(words)
    best, score = None, cutoff
    for choice in choices:
        likeness = max((difflib.SequenceMatcher(None, word, choice).ratio() for word in wanted), default=0.0)
        if likeness > score or (best is None and likeness == score):
            best, score = choice, likeness
    return best
