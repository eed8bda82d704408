"""The injection screen: words in the texts under test aimed at the judge, and JSON shaped like a verdict. Its
warnings go with the verdict; they never change a score."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

from bot.records import Triple
from bot.rubric import Rubric

DIGIT = b"0"  # stands in a text's words (`_words_of`) for a digit anywhere in it
MARKS = (":", "<", "[")  # characters a kind may need, found as they are
WORDS_FROM = 256  # characters: a text this long is looked up by words first; a shorter one goes to `injection()` at once


@dataclass(frozen=True)
class Phrase:
    """Words aimed at the judge: one of `words`, whole (no letter before it), then `rest`; `needs`: groups of words
    (space-separated) of which the text must hold one each for it to match, or a mark of MARKS, or DIGIT."""

    words: str
    rest: str
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    """A pattern of text aimed at the judge, and what it cannot match without: for each group of `needs`, one of its
    words standing whole in the text (letters a-z between other characters), or one of its marks, or a digit (DIGIT).
    Most long texts lack some group, and `aimed_at_judge` then skips the pattern: a text's words are cheaper to look
    up than a pattern is to try at every letter of a long passage."""

    pattern: re.Pattern[str]
    needs: tuple[frozenset[bytes], ...]  # the first group: the words or marks the pattern opens with

    def found_in(self, lowered: str, words: frozenset[bytes]) -> bool:
        """Whether the pattern matches a lowered text whose `_words_of` are `words`."""
        for group in self.needs:
            if words.isdisjoint(group):
                return False
        return self.pattern.search(lowered) is not None


def _kind(pattern: str, *needs: str) -> Kind:
    return Kind(re.compile(pattern), tuple(frozenset(word.encode() for word in group.split()) for group in needs))


ORDERS = "instruction instructions rubric rubrics rules guidelines prompt prompts directions criteria"
JUDGES = "judge grader evaluator reviewer"
# Text that tries to talk to the judge, matched on the folded text in lower case after a newline (see
# `aimed_at_judge`). The row is still graded, by the same request; its verdict carries a flag naming the text, and a
# flag never changes a score.
PHRASES = (
    Phrase("ignore disregard forget override bypass",
           r"\s+(?:(?:all|any|every|the|your|my|of|previous|above|prior|earlier|preceding|former|those|these|system"
           r"|grading|scoring)\s+)*(?:instructions?|rubrics?|rules|guidelines|prompts?|directions|criteria)\b", (ORDERS,)),
    Phrase("you", r"\s+are\s+now\b", ("are", "now")),
    Phrase("new", r"\s+instructions?\s*:", ("instruction instructions", ":")),
    Phrase("grade score rate mark evaluate judge classify",
           r"\s+(?:this|it|me|my|the|that)(?:\s+(?:answer|response|reply|one))?\s+as\b", ("this it me my the that", "as")),
    Phrase("give assign award grant",
           r"\s+(?:(?:it|this|me|the|my|that|answer|response|reply)\s+)*(?:a\s+|the\s+)?"
           r"(?:full\s+(?:marks|points|score|credit)|(?:perfect|maximum|max|top|highest)\s+(?:score|marks|grade|rating)"
           r"|(?:score|grade|rating)\s+of\s+\d+|\d+\s*/\s*\d+|\d+\s+out\s+of\s+\d+"
           r"|(?:5|10|100)(?=\s*(?:[.!,;)]|$|points?\b|marks\b|stars?\b)))",
           (f"full perfect maximum max top highest {DIGIT.decode()}",)),
    Phrase("score", r"\s+(?:of\s+)?(?:5|10|100)\b", (DIGIT.decode(),)),
    Phrase("system", r"\s+prompt\b", ("prompt",)),
    Phrase("note message instruction", rf"s?\s+(?:to|for)\s+the\s+(?:{JUDGES.replace(' ', '|')})\b", ("to for", "the", JUDGES)),
)
ROLES = f"system assistant developer auditor {JUDGES}"
OTHERS = (  # (pattern, needs): each opens with a literal, as does each word of PHRASES, so the engine skips ahead fast
    (rf"\n\s*(?:{ROLES.replace(' ', '|')})\s*:", ROLES, ":"),  # a role marker opening a line
    (r"<\|(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\|>", "<"),  # a chat template's tokens
    (r"\[/?inst\]", "["),
    (r"</?data-[0-9a-f]*>", "<"),  # a boundary like the one the texts are fenced in
)


def _after(word: str, rest: str) -> str:
    """What follows a phrase's opening `word` in its pattern: no letter before the word, then `rest`."""
    return rf"(?<![a-z]{word}){rest}"


def _grouped(phrases: tuple[Phrase, ...]) -> str:
    """Every phrase in one pattern, the words that open with the same letter under one group that opens with that
    letter: a pattern whose every branch opens with a literal lets the regex engine skip ahead fast (a leading \\b or
    group makes it try every branch everywhere), and a position is then tried against the words of its letter only."""
    by_letter: dict[str, list[str]] = {}
    for phrase in phrases:
        for word in phrase.words.split():
            by_letter.setdefault(word[0], []).append(word[1:] + _after(word, phrase.rest))
    return "|".join(f"{letter}(?:{'|'.join(branches)})" for letter, branches in by_letter.items())


@functools.cache
def injection() -> re.Pattern[str]:
    """Every kind in one pattern: quicker than the kinds one by one on a short text."""
    return re.compile("|".join([_grouped(PHRASES), *(pattern for pattern, *_ in OTHERS)]))


class Kinds(NamedTuple):
    """Each word of PHRASES and each of OTHERS as a kind of its own: for each word or mark, the kinds that open with
    it; and every word or mark some kind needs."""

    opened_by: dict[bytes, list[Kind]]
    needed: frozenset[bytes]


@functools.cache
def kinds() -> Kinds:
    """The kinds, made when a long text is first screened."""
    every = [_kind(word + _after(word, phrase.rest), f"{word} {word}s" if phrase.rest.startswith("s?") else word,
                   *phrase.needs) for phrase in PHRASES for word in phrase.words.split()]  # "notes" for "note"
    every += [_kind(*other) for other in OTHERS]
    opened_by: dict[bytes, list[Kind]] = {}
    for kind in every:
        for word in kind.needs[0]:
            opened_by.setdefault(word, []).append(kind)
    return Kinds(opened_by, frozenset().union(*(group for kind in every for group in kind.needs)))


_LETTERS = bytes(code if ord("a") <= code <= ord("z") else ord(" ") for code in range(256))  # other bytes: spaces
_NOT_DIGITS = bytes(code for code in range(256) if not ord("0") <= code <= ord("9"))
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
    lowered = "\n" + text.lower()
    if len(lowered) < WORDS_FROM:
        return injection().search(lowered) is not None
    known = kinds()
    words = _words_of(lowered, known.needed)
    tried = {id(kind): kind for word in words for kind in known.opened_by.get(word, ())}  # each kind once
    return any(kind.found_in(lowered, words) for kind in tried.values())


def _words_of(lowered: str, needed: frozenset[bytes]) -> frozenset[bytes]:
    """Of the `needed` words and marks, those a lowered text holds (DIGIT when it holds a digit: any character that
    is not ASCII may be one)."""
    raw = lowered.encode("utf-8", "surrogatepass")
    digit = not lowered.isascii() or bool(raw.translate(None, _NOT_DIGITS))
    return needed.intersection(raw.translate(_LETTERS).split()).union(
        [mark.encode() for mark in MARKS if mark in lowered], [DIGIT] if digit else [])


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


