"""What makes a labeled case one case: its workspace, channel, rubric and texts (with their retrieved passages), as
one key (kept in the question of a judgment whose texts were removed, so that it stays the same case)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.store.tables.as_read import Judgment

REMOVED = "[removed]"  # what every removed text reads as (bot.store.retention.texts)
REMOVED_CASE = f"{REMOVED} case "  # a removed question: the marker, then the case the judgment was of


def case_key(team_id: str | None, channel_id: str | None, rubric_name: str, question: str, reference: str,
             answer: str, answer_b: str | None = None, context: str | None = None) -> str:
    """One key for a question, reference and answer graded with a rubric in a channel (None: the terminal's): every
    judgment of the same texts there, whichever run or file it came with, is the same case to a person labeling it.
    A pair's case is its question, reference and both answers in the file's order (whichever order the judge saw).
    The passages retrieved for it (`context`, as the history keeps them: bot.records.context_text) are part of the
    case: the same texts with other passages are another case, and texts without context keep the key they had
    before context existed. A judgment whose texts were removed keeps the case it was of."""
    kept = removed_case(question) if reference == REMOVED and answer == REMOVED else None
    if kept is not None:  # a question typed with the marker, beside texts of its own, is a question like any other
        return kept
    parts = [team_id or "", channel_id or "", rubric_name, question, reference, answer,
             *(() if answer_b is None else (answer_b,))]
    if context is not None:
        parts.append(f"\x1econtext {context}")
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def judgment_case(judgment: Judgment) -> str:
    """The case a judgment is of."""
    return case_key(judgment.team_id, judgment.channel_id, judgment.rubric_name, judgment.question,
                    judgment.reference, judgment.answer, judgment.answer_b, judgment.context)


def removed_question(case: str) -> str:
    """What the question of a judgment of `case` reads as once its texts are removed."""
    return f"{REMOVED_CASE}{case}"


def removed_case(question: str) -> str | None:
    """The case of a judgment whose texts were removed, from its question; None for a question still there."""
    return question[len(REMOVED_CASE):] if question.startswith(REMOVED_CASE) else None


def was_removed(judgment: Judgment) -> bool:
    """Whether a judgment had its texts removed (bot.store.retention.texts)."""
    return removed_case(judgment.question) is not None and judgment.reference == REMOVED


def texts_removed(question: Any, reference: Any) -> Any:
    """SQL: the judgment of these `question` and `reference` columns had its texts removed (a question typed with the
    marker, beside a reference of its own, has not)."""
    return question.like(f"{REMOVED_CASE}%") & (reference == REMOVED)
