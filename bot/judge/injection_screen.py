"""The injection screen: words in the texts under test aimed at the judge, JSON shaped like a verdict, and answers
that are empty or only an opener. A screen's warnings go with the verdict; they never change a score."""

from __future__ import annotations

import functools
import re
import unicodedata

from bot.records import Triple
from bot.rubric import Rubric


def _words(words: str, rest: str) -> str:
    """One branch per word, each opening with the word itself, whole: a pattern whose every branch opens with a
    literal lets the regex engine skip ahead fast (a leading \\b or group makes it try every branch everywhere)."""
    return "|".join(rf"{word}(?<![a-z]{word}){rest}" for word in words.split())


# Text that tries to talk to the judge, matched on the folded text in lower case after a newline (see
# `aimed_at_judge`). The row is still graded, by the same request; its verdict carries a flag naming the text, and a
# flag never changes a score.
INJECTION = re.compile("|".join([
    _words("ignore disregard forget override bypass",
           r"\s+(?:(?:all|any|every|the|your|my|of|previous|above|prior|earlier|preceding|former|those|these|system"
           r"|grading|scoring)\s+)*(?:instructions?|rubrics?|rules|guidelines|prompts?|directions|criteria)\b"),
    _words("you", r"\s+are\s+now\b"),
    _words("new", r"\s+instructions?\s*:"),
    _words("grade score rate mark evaluate judge classify",
           r"\s+(?:this|it|me|my|the|that)(?:\s+(?:answer|response|reply|one))?\s+as\b"),
    _words("give assign award grant",
           r"\s+(?:(?:it|this|me|the|my|that|answer|response|reply)\s+)*(?:a\s+|the\s+)?"
           r"(?:full\s+(?:marks|points|score|credit)|(?:perfect|maximum|max|top|highest)\s+(?:score|marks|grade|rating)"
           r"|(?:score|grade|rating)\s+of\s+\d+|\d+\s*/\s*\d+|\d+\s+out\s+of\s+\d+"
           r"|(?:5|10|100)(?=\s*(?:[.!,;)]|$|points?\b|marks\b|stars?\b)))"),
    _words("score", r"\s+(?:of\s+)?(?:5|10|100)\b"),
    _words("system", r"\s+prompt\b"),
    _words("note message instruction", r"s?\s+(?:to|for)\s+the\s+(?:judge|grader|evaluator|reviewer)\b"),
    r"\n\s*(?:system|assistant|developer|grader|judge|evaluator|reviewer|auditor)\s*:",  # a role marker opening a line
    r"<\|im_(?:start|end)\|>|<\|(?:system|endoftext|eot_id|start_header_id)\|>|\[/?inst\]|</?data-[0-9a-f]*>",
]))
# Characters that show nothing (zero-width, direction marks, tags, variation selectors) and hide a word from a pattern.
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                       "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]")
# Cyrillic and Greek letters drawn like Latin ones ("іgnоrе"), folded to them before matching.
LOOK_ALIKES = str.maketrans("АВЕКМНОРСТХУІЈЅаеорсухіјѕԁһӏԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοριυνκτχ",
                            "ABEKMHOPCTXYIJSaeopcyxijsdhlqwABEZHIKMNOPTYXaopiuvktx")
# An answer that is empty or only an opener: judges are known to grade such answers as correct (arXiv 2507.08794).
# "OK", "Okay." and "Sure" are real short answers (a yes to a yes/no question), so they are openers only with a colon
# ("Sure:"). Punctuation alone, a lone "-" included, stays bare: many exports write "-" for an empty cell.
BARE_ANSWER = re.compile(
    r"[\W_]*(?:(?:(?:the|my|final|short)\s+)*(?:answer|solution|response|reasoning|explanation|thought\s+process"
    r"|thoughts|thinking|analysis|step\s+1)|let['’]?s\s+(?:think|solve\s+(?:this|it)(?:\s+problem)?|work\s+it\s+out)"
    r"\s+step\s+by\s+step|let\s+us\s+think\s+step\s+by\s+step|here\s+is\s+(?:the|my)\s+(?:answer|solution)"
    r"|(?:sure|okay|ok)\s*:|解|解答|答案|かいせつ|respuesta|soluci[oó]n|r[ée]ponse|antwort|l[oö]sung)?[\W_]*",
    re.IGNORECASE,
)
BARE_FLAG = "the answer is empty or only an opener (such as \"Answer:\"), which judges often grade as correct"
VERDICT_WORDS = ("score", "scores", "verdict", "grade", "rating", "pass", "passed", "result", "label")


def folded(text: str) -> str:
    """`text` as a pattern should see it: NFKC (full-width and styled letters made plain), invisible characters
    dropped, Cyrillic and Greek look-alikes made Latin. Plain ASCII, the usual case, costs one check."""
    if text.isascii():
        return text
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(LOOK_ALIKES)


def is_bare(answer: str) -> bool:
    """Whether an answer is empty or only an opener (":", "Answer:", "Let's think step by step")."""
    return len(answer) <= 80 and BARE_ANSWER.fullmatch(folded(answer)) is not None


def aimed_at_judge(text: str) -> bool:
    """Whether a (folded) text holds words aimed at the judge: an order, a score asked for, a role marker."""
    return INJECTION.search("\n" + text.lower()) is not None


@functools.lru_cache(maxsize=64)
def verdict_shape(fields: tuple[str, ...]) -> re.Pattern[str]:
    """A JSON key that a verdict of a rubric with these output fields would hold."""
    names = "|".join(re.escape(name) for name in sorted({*fields, *VERDICT_WORDS}, key=len, reverse=True))
    return re.compile(rf'[{{,]\s*"(?:{names})"\s*:', re.IGNORECASE)


def screen(rubric: Rubric, triple: Triple) -> list[str]:
    """Warnings about a triple's texts for its verdict: a bare answer, and in any text under test words aimed at
    the judge or JSON shaped like a verdict, each retrieved passage named by its number ("passage 2 of the context").
    They never change a score."""
    flags = [BARE_FLAG] if any(is_bare(answer) for answer in triple.answers()) else []
    shape = verdict_shape(tuple(rubric.output))
    for name, text in triple.named_texts():
        text = folded(text)
        if aimed_at_judge(text):
            flags.append(f"possible prompt injection in {name}")
        if shape.search(text):
            flags.append(f"JSON shaped like a verdict in {name}")
    return flags


