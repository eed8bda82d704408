"""Scripted eth verdicts, a team rubric, and reading back what the judge received: shared by the tests."""

from __future__ import annotations

import json
import re

from tests.support.openai_server import Reply

VERDICTS = {  # result_tag -> (correctness, completeness); every one obeys the eth rules
    "Correct": (2, 2),
    "Generic": (0, 1),
    "Refusal": (0, 0),
    "Hallucination": (0, 0),
}


def eth_reply(tag: str) -> Reply:
    """A valid eth verdict with `tag`."""
    correctness, completeness = VERDICTS[tag]
    return Reply.json({"correctness": correctness, "completeness": completeness, "result_tag": tag,
                       "reasoning": f"graded as {tag}"})


def triple_of(body: dict) -> tuple[str, str, str]:
    """(question, reference, answer) exactly as the judge received them, between the boundary markers."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    found = re.findall(r"<(DATA-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.DOTALL)
    assert len(found) in (3, 4), user[:500]  # the rubric's worked examples, when it has any, come first
    return found[-3][1], found[-2][1], found[-1][1]


def examples_of(body: dict) -> list[tuple[str, dict]]:
    """(answer, expected values) of each worked example the judge was sent, in order."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    found = re.findall(r"<(DATA-[0-9a-f]+)>\n(.*?)\n</\1>", user, re.DOTALL)
    if len(found) != 4:
        return []
    return [(answer, json.loads(expected)) for answer, expected in
            re.findall(r"^Answer: (.*?)\nExpected: (\{.*?\})$", found[0][1], re.MULTILINE | re.DOTALL)]


# A team rubric whose headline multiplies a number the judge may leave null.
NULLABLE_RUBRIC = """\
name: team-nullable
version: "1"
title: Team rubric with an optional number
description: The headline multiplies a number the judge may leave null.
system: Grade the answer; give x from 0 to 10, or null when it cannot be graded.
user_template: |
  Q: $question
  R: $reference
  A: $answer
output:
  x: {type: number, min: 0, max: 10, nullable: true}
  why: {type: string}
headline:
  score: x * 10
  pass: x >= 5
  label: "x = {x}"
"""
