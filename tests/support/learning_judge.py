"""A judge that learns from the worked examples in its prompt, as a real judge would: an answer that begins with the
same word as an example's answer gets that example's tag; any other gets the tag it is scripted to give."""

from __future__ import annotations

import threading

from tests.support.openai_server import Reply
from tests.support.replies import eth_reply, examples_of, triple_of


class LearningJudge:
    """Scripted tags by the answer's first word, overridden by a matching example unless `ignores_examples`."""

    def __init__(self, tags: dict[str, str], *, ignores_examples: bool = False) -> None:
        self.tags, self.ignores_examples = tags, ignores_examples
        self.leaks: list[str] = []  # answers judged while an example held that very answer
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        answer = triple_of(body)[2]
        first = answer.split()[0]
        examples = examples_of(body)
        with self.lock:
            self.leaks += [answer for shown, _ in examples if shown == answer]
        if not self.ignores_examples:
            for shown, expected in examples:
                if shown.split()[0] == first and "result_tag" in expected:
                    return eth_reply(expected["result_tag"])
        return eth_reply(self.tags[first])
