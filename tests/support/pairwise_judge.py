"""Pairwise judges for the tests' judge server: one that prefers the answer holding a mark wherever it is shown, one
that always picks the answer shown first, and reading back which answers a judge was shown in which order."""

from __future__ import annotations

import re

from tests.support.openai_server import Reply


def shown_pair(body: dict) -> tuple[str, str, str, str]:
    """(question, reference, first answer, second answer) exactly as the judge received them."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    found = re.findall(r"<(DATA-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.DOTALL)
    assert len(found) == 4, user[:500]
    return found[0][1], found[1][1], found[2][1], found[3][1]


def verdict(winner: str, margin: str | None = None) -> Reply:
    """A valid pairwise verdict naming `winner` (A, B or tie)."""
    return Reply.json({"reasoning": f"chose {winner}", "winner": winner,
                       "margin": margin or ("slight" if winner == "tie" else "clear")})


class PrefersMarked:
    """Prefers the answer holding `mark` whatever its position; a tie when both or neither hold it. A question
    holding `flip` is judged by position instead (the first answer wins), so that its pair is inconsistent."""

    def __init__(self, mark: str = "[better]", flip: str = "[flip]") -> None:
        self.mark, self.flip = mark, flip
        self.seen: list[tuple[str, str, str]] = []  # (question, first, second) as shown

    def __call__(self, body: dict) -> Reply:
        question, _, first, second = shown_pair(body)
        self.seen.append((question, first, second))
        if self.flip in question:
            return verdict("A")
        one, other = self.mark in first, self.mark in second
        return verdict("A" if one and not other else "B" if other and not one else "tie")


class PicksFirst:
    """Always names the answer shown first: a judge with nothing but position bias."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def __call__(self, body: dict) -> Reply:
        question, _, first, second = shown_pair(body)
        self.seen.append((question, first, second))
        return verdict("A")
