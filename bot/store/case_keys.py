"""What makes a labeled case one case: its workspace, channel, rubric and texts, as one key."""

from __future__ import annotations

import hashlib

from bot.store.models import Judgment


def case_key(team_id: str | None, channel_id: str | None, rubric_name: str, question: str, reference: str,
             answer: str, answer_b: str | None = None) -> str:
    """One key for a question, reference and answer graded with a rubric in a channel (None: the terminal's): every
    judgment of the same texts there, whichever run or file it came with, is the same case to a person labeling it.
    A pair's case is its question, reference and both answers in the file's order (whichever order the judge saw)."""
    parts = [team_id or "", channel_id or "", rubric_name, question, reference, answer,
             *(() if answer_b is None else (answer_b,))]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def judgment_case(judgment: Judgment) -> str:
    """The case a judgment is of."""
    return case_key(judgment.team_id, judgment.channel_id, judgment.rubric_name, judgment.question,
                    judgment.reference, judgment.answer, judgment.answer_b)
