"""The content-free screen: answers with nothing in them to grade (empty, only punctuation, only a reasoning opener,
the question said again), which strong judges are known to pass, decided before any judge is asked."""

from __future__ import annotations

import re
import string
import unicodedata

from bot.judge.injection_screen import folded
from bot.judge.prompt import provenance
from bot.records import RowState, Triple, Verdict
from bot.rubric import Rubric

# An answer that is only an opener: judges are known to grade such answers as correct, 80-90% of the time for ":" or
# "Thought process:" (arXiv 2507.08794, "One Token to Fool LLM-as-a-Judge"), and neither chain of thought nor
# majority voting fixes it. "OK", "Okay." and "Sure" are real short answers (a yes to a yes/no question), so they are
# openers only with a colon ("Sure:").
OPENER = re.compile(
    r"[\W_]*(?:(?:(?:the|my|final|short)\s+)*(?:answer|solution|response|reasoning|explanation|thought\s+process"
    r"|thoughts|thinking|analysis|step\s+1)|let['’]?s\s+(?:think|solve\s+(?:this|it)(?:\s+problem)?|work\s+it\s+out"
    r"|break\s+(?:this|it)\s+down)(?:\s+step\s+by\s+step)?|let\s+(?:us|me)\s+think(?:\s+step\s+by\s+step)?"
    r"|here\s+is\s+(?:the|my)\s+(?:answer|solution)|(?:sure|okay|ok)\s*:|解|解答|答案|かいせつ|respuesta"
    r"|soluci[oó]n|r[ée]ponse|antwort|l[oö]sung)[\W_]*",
    re.IGNORECASE,
)
OPENER_ROOM = 80  # longer than this, an answer says something besides an opener
NOT_WORDS = re.compile(r"[\W_]+")
EMPTY = "is empty"
PUNCTUATION = "is only punctuation"
OPENS_ONLY = 'is only an opener (such as "Thought process:") with nothing after it'
ECHO = "only repeats the question"
SCREENED = "not sent to the judge: the content-free screen failed it"  # ends every flag of a screened verdict
PAIR_SCORES = {"A": 100.0, "tie": 50.0, "B": 0.0}  # a pairwise headline: how far the answer shown first was preferred


def _is_punctuation(char: str) -> bool:
    return char in string.punctuation or char.isspace() or unicodedata.category(char)[0] in "PZC"


def _words(text: str) -> str:
    """`text` for comparing: folded, in lower case, its punctuation and spacing made one space."""
    return NOT_WORDS.sub(" ", text.casefold()).strip()


def why_content_free(answer: str, question: str) -> str | None:
    """What makes `answer` content-free ("is only punctuation"), or None when it says something: empty, only
    punctuation or spacing, only an opener, or the question of at least two words said again (case, spacing and
    punctuation aside). "Yes.", "42" and "OK" say something."""
    if len(answer) <= OPENER_ROOM:
        text = folded(answer)
        if not text.strip():
            return EMPTY
        if all(_is_punctuation(char) for char in text):
            return PUNCTUATION
        if OPENER.fullmatch(text):
            return OPENS_ONLY
    if len(answer) <= 2 * len(question) + 16:  # much longer than the question, it cannot be the question
        asked = _words(folded(question))
        if len(asked.split()) >= 2 and _words(folded(answer)) == asked:
            return ECHO
    return None


def content_free(triple: Triple) -> list[str]:
    """Why each answer of `triple` is content-free ("the answer is only punctuation", "the second answer only repeats
    the question"); empty when every answer says something."""
    names = ("the answer",) if triple.answer_b is None else ("the first answer", "the second answer")
    return [f"{name} {why}" for name, answer in zip(names, triple.answers(), strict=True)
            if (why := why_content_free(answer, triple.question)) is not None]


def screen_flags(reasons: list[str]) -> list[str]:
    """The flags a verdict of a content-free answer carries when the rubric sends it to the judge anyway."""
    return [f"{reason}, which judges often pass" for reason in reasons]


def screened(rubric: Rubric, judge_model: str, triple: Triple, flags: list[str]) -> Verdict | None:
    """The verdict of a row the content-free screen decides (the rubric's `content_free: fail`), at no cost and with
    no judge asked; None when the judge is to be asked.

    One answer: scored 0 and failed, labeled with why ("Content-free: the answer is only punctuation"), never a score
    passed off as a judge's: the flag says the judge was not asked. A pair: an answer with content beats a
    content-free one, two content-free answers tie.
    """
    reasons = content_free(triple)
    if not reasons or rubric.content_free != "fail":
        return None
    why = "; ".join(reasons)
    marks = [f"{reason}: {SCREENED}" for reason in reasons]
    common = {"status": RowState.SCORED, "flags": [*marks, *flags], "cost_usd": 0.0,
              **provenance(rubric, judge_model, triple)}
    if triple.answer_b is None:
        return Verdict(output={}, headline=0.0, passed=False, label=f"Content-free: {why}", **common)
    empty = [why_content_free(answer, triple.question) is not None for answer in triple.answers()]
    winner = "tie" if all(empty) else "B" if empty[0] else "A"
    return Verdict(output={"winner": winner}, headline=PAIR_SCORES[winner], passed=winner != "tie",
                   label=f"{winner} · content-free: {why}", tag=winner if rubric.headline.tag == "winner" else None,
                   **common)


def is_screened(flags: list[str] | None) -> bool:
    """Whether a verdict with these flags was made by the content-free screen rather than a judge."""
    return any(flag.endswith(SCREENED) for flag in flags or ())
