"""A judge scripted per model and answer, and the rows the sample and jury tests give it."""

from __future__ import annotations

import threading
from collections import Counter

from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, triple_of


class Script:
    """A judge scripted per model and answer: the nth request for them gets the nth tag of its list (cycling)."""

    def __init__(self, plan: dict[str, dict[str, list[str]]]) -> None:
        self.plan = plan
        self.seen: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        model, answer = body["model"], triple_of(body)[2]
        with self.lock:
            count = self.seen[(model, answer)]
            self.seen[(model, answer)] += 1
        tags = self.plan[model][answer]
        return eth_reply(tags[count % len(tags)])


def rows_of(*answers: str) -> list:
    from bot.csvfiles.rows import CsvRow

    return [CsvRow(line=n + 2, question=f"q{n}", reference="Use myStudies.", answer=answer, model=None,
                   cells={"answer": answer}) for n, answer in enumerate(answers)]

