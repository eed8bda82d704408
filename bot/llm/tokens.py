"""About how many tokens a text costs, without a tokenizer: for estimates of cost and of a prompt's size."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable

# Pieces of text as a byte-pair tokenizer (OpenAI's o200k) first splits them: words, numbers, punctuation, line breaks.
PIECES = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]+|\n+")
_LINE_BREAKS = re.compile("\n+")
MOSTLY_ASCII = 0.8  # the share of ASCII characters from which a text's ASCII words are counted apart (for speed)
WORD_LETTERS = 10  # letters of a Latin-script word that still make one token
WIDE_LETTERS_PER_TOKEN = 1.5  # Chinese, Japanese, Korean
CYRILLIC_LETTERS_PER_TOKEN = 5.0  # Cyrillic and Greek
SCRIPT_LETTERS_PER_TOKEN = 3.5  # Arabic, Hebrew and the rest
INDIC_LETTERS_PER_TOKEN = 2.0  # Devanagari and the other Brahmic scripts
PUNCTUATION_PER_TOKEN = 2.0  # "{", ": and the like often pair up
# The most tokens `text_tokens` gives one character (a one-letter accented word): a text of n characters costs at most
# n times this, a bound that needs no counting.
MAX_TOKENS_PER_CHAR = 1 + 1 / (2 * WORD_LETTERS)


def _ascii_table(kind: str) -> bytes:
    """A bytes.translate table that makes the ASCII characters of one kind "x" and every other byte a space."""
    return bytes(ord("x") if chr(code) in kind else ord(" ") for code in range(256))


# An ASCII text's pieces counted kind by kind in C (bytes.translate, then runs of "x" counted): retrieved passages
# make prompts of many thousand pieces, too many to look at one at a time. The kinds are PIECES' own.
_ASCII = [chr(code) for code in range(128)]
_LETTERS = _ascii_table("".join(ch for ch in _ASCII if ch.isalpha()))
_DIGITS = _ascii_table("".join(ch for ch in _ASCII if ch.isdigit()))
_MARKS = _ascii_table("".join(ch for ch in _ASCII if not (ch.isalnum() or ch == "_" or ch.isspace())))
_BREAKS = _ascii_table("\n")


def text_tokens(text: str) -> float:
    """About how many tokens a text costs, piece by piece: a Latin word is one token (long ones more), other scripts
    a few letters a token, CJK about a character and a half. The words (between spaces) of a text mostly in ASCII
    (a German or French passage) are counted apart: those in ASCII as ASCII, the rest piece by piece, its line breaks
    by themselves. No piece runs across a space, so the count is the same."""
    if text.isascii():
        return _ascii_tokens(text.encode("ascii"))
    if len(text.encode("ascii", "ignore")) < len(text) * MOSTLY_ASCII:
        return _piece_tokens(text)
    words = text.split()
    plain = " ".join(filter(str.isascii, words)).encode("ascii")
    return (_ascii_tokens(plain) + _piece_tokens(" ".join(itertools.filterfalse(str.isascii, words)))
            + len(_LINE_BREAKS.findall(text)))


def texts_tokens(texts: Iterable[str]) -> float:
    """`text_tokens` of several texts, summed: counted once, joined by a space (no piece runs across a space)."""
    return text_tokens(" ".join(texts))


def _piece_tokens(text: str) -> float:
    """`text_tokens` of any text, one piece at a time."""
    total = 0.0
    for piece in PIECES.findall(text):
        first = piece[0]
        if first.isalpha():
            total += _word_tokens(piece)
        elif first == "\n" or first.isdigit():
            total += 1
        else:
            total += math.ceil(len(piece) / PUNCTUATION_PER_TOKEN)
    return total


def _ascii_tokens(raw: bytes) -> float:
    """`text_tokens` of an ASCII text, counted the same: a word of n letters 1 + n // 11 tokens, a group of up to
    three digits or a run of line breaks one, a run of marks one a pair."""
    spaced = b" " + raw  # every kind's translation then opens with a space: a run at the start follows one too
    breaks = _runs(spaced.translate(_BREAKS)) if b"\n" in raw else 0
    return float(_runs(spaced.translate(_LETTERS), WORD_LETTERS, WORD_LETTERS + 1)
                 + _runs(spaced.translate(_DIGITS), 3, 3) + breaks + _runs(spaced.translate(_MARKS), 2, 2))


def _runs(spaced: bytes, one_token: int | None = None, step: int = 1) -> int:
    """The tokens of the runs of "x" in a translated text that opens with a space: one a run, and (with `one_token`)
    one more for every `step` characters a run has past `one_token`, where `step` is `one_token` or one more. Counted
    with bytes.count, without cutting the runs out: a run of n characters has (n - d) // step more tokens,
    d = one_token + 1 - step, which are its non-overlapping stretches of `step` characters once its first d are
    dropped."""
    runs = spaced.count(b" x")
    if one_token is None or spaced.find(b"x" * (one_token + 1)) < 0:
        return runs
    body = spaced if step == one_token + 1 else spaced.replace(b" x", b"  ")  # each run less its first character
    return runs + body.count(b"x" * step)


def _word_tokens(word: str) -> float:
    """The tokens of one run of letters, by its script."""
    if word.isascii():
        return 1 + len(word) // (WORD_LETTERS + 1)
    first = word[0]
    if "\u2e80" <= first <= "\u9fff" or "\uac00" <= first <= "\ud7af" or "\uf900" <= first <= "\ufaff":
        return len(word) / WIDE_LETTERS_PER_TOKEN
    if "\u0900" <= first <= "\u0dff":
        return len(word) / INDIC_LETTERS_PER_TOKEN
    if first <= "\u024f":  # accented Latin: a word, a little more when long
        return 1 + len(word) / (2 * WORD_LETTERS)
    if first <= "\u04ff":
        return max(1.0, len(word) / CYRILLIC_LETTERS_PER_TOKEN)
    return max(1.0, len(word) / SCRIPT_LETTERS_PER_TOKEN)


MESSAGE_TOKENS = 4  # what a message costs besides its text


@functools.lru_cache(maxsize=64)
def _text_tokens_kept(text: str) -> float:
    return text_tokens(text)


def messages_tokens(messages: list[dict[str, str]]) -> float:
    """About the tokens of a request's messages, before the provider counts them (the system prompt, the same on
    every row of a rubric, counted once)."""
    return sum((_text_tokens_kept(message["content"]) if message["role"] == "system" else
                text_tokens(message["content"])) + MESSAGE_TOKENS for message in messages)
