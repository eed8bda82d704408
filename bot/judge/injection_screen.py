"""The injection screen: words in the texts under test aimed at the judge, and JSON shaped like a verdict. Its
warnings go with the verdict; they never change a score."""

from __future__ import annotations

import functools
import re
import unicodedata

from bot.records import Triple
from bot.rubric import Rubric


def _words(*kinds: tuple[str, str]) -> str:
    """One branch per word followed by its kind's `rest`, each word whole, the branches of words that open with the
    same letter under one group that opens with that letter: a pattern whose every branch opens with a literal lets
    the regex engine skip ahead fast (a leading \\b or group makes it try every branch everywhere), and a position
    is then tried against the words of its letter only."""
    by_letter: dict[str, list[str]] = {}
    for words, rest in kinds:
        for word in words.split():
            by_letter.setdefault(word[0], []).append(rf"{word[1:]}(?<![a-z]{word}){rest}")
    return "|".join(f"{letter}(?:{'|'.join(branches)})" for letter, branches in by_letter.items())


# Text that tries to talk to the judge, matched on the folded text in lower case after a newline (see
# `aimed_at_judge`). The row is still graded, by the same request; its verdict carries a flag naming the text, and a
# flag never changes a score.
INJECTION = re.compile("|".join([
    _words(
        ("ignore disregard forget override bypass",
         r"\s+(?:(?:all|any|every|the|your|my|of|previous|above|prior|earlier|preceding|former|those|these|system"
         r"|grading|scoring)\s+)*(?:instructions?|rubrics?|rules|guidelines|prompts?|directions|criteria)\b"),
        ("you", r"\s+are\s+now\b"),
        ("new", r"\s+instructions?\s*:"),
        ("grade score rate mark evaluate judge classify",
         r"\s+(?:this|it|me|my|the|that)(?:\s+(?:answer|response|reply|one))?\s+as\b"),
        ("give assign award grant",
         r"\s+(?:(?:it|this|me|the|my|that|answer|response|reply)\s+)*(?:a\s+|the\s+)?"
         r"(?:full\s+(?:marks|points|score|credit)|(?:perfect|maximum|max|top|highest)\s+(?:score|marks|grade|rating)"
         r"|(?:score|grade|rating)\s+of\s+\d+|\d+\s*/\s*\d+|\d+\s+out\s+of\s+\d+"
         r"|(?:5|10|100)(?=\s*(?:[.!,;)]|$|points?\b|marks\b|stars?\b)))"),
        ("score", r"\s+(?:of\s+)?(?:5|10|100)\b"),
        ("system", r"\s+prompt\b"),
        ("note message instruction", r"s?\s+(?:to|for)\s+the\s+(?:judge|grader|evaluator|reviewer)\b"),
    ),
    r"\n\s*(?:system|assistant|developer|grader|judge|evaluator|reviewer|auditor)\s*:",  # a role marker opening a line
    r"<\|im_(?:start|end)\|>|<\|(?:system|endoftext|eot_id|start_header_id)\|>|\[/?inst\]|</?data-[0-9a-f]*>",
]))
# Characters that show nothing (zero-width, direction marks, tags, variation selectors) and hide a word from a pattern.
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                       "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]")
# Cyrillic and Greek letters drawn like Latin ones ("іgnоrе"), folded to them before matching.
LOOK_ALIKES = str.maketrans("АВЕКМНОРСТХУІЈЅаеорсухіјѕԁһӏԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοριυνκτχ",
                            "ABEKMHOPCTXYIJSaeopcyxijsdhlqwABEZHIKMNOPTYXaopiuvktx")
VERDICT_WORDS = ("score", "scores", "verdict", "grade", "rating", "pass", "passed", "result", "label")


def folded(text: str) -> str:
    """`text` as a pattern should see it: NFKC (full-width and styled letters made plain), invisible characters
    dropped, Cyrillic and Greek look-alikes made Latin. Plain ASCII, the usual case, costs one check."""
    if text.isascii():
        return text
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(LOOK_ALIKES)


def aimed_at_judge(text: str) -> bool:
    """Whether a (folded) text holds words aimed at the judge: an order, a score asked for, a role marker."""
    return INJECTION.search("\n" + text.lower()) is not None


@functools.lru_cache(maxsize=64)
def verdict_shape(fields: tuple[str, ...]) -> re.Pattern[str]:
    """A JSON key that a verdict of a rubric with these output fields would hold."""
    names = "|".join(re.escape(name) for name in sorted({*fields, *VERDICT_WORDS}, key=len, reverse=True))
    return re.compile(rf'[{{,]\s*"(?:{names})"\s*:', re.IGNORECASE)


def screen(rubric: Rubric, triple: Triple) -> list[str]:
    """Warnings about a triple's texts for its verdict: in any text under test, words aimed at the judge or JSON
    shaped like a verdict, each retrieved passage named by its number ("passage 2 of the context"). They never change
    a score (answers with nothing in them are bot.judge.content_free's)."""
    flags = []
    shape = verdict_shape(tuple(rubric.output))
    for name, text in triple.named_texts():
        text = folded(text)
        if aimed_at_judge(text):
            flags.append(f"possible prompt injection in {name}")
        if '"' in text and shape.search(text):  # a verdict's key is quoted: a text without a quote holds none
            flags.append(f"JSON shaped like a verdict in {name}")
    return flags


