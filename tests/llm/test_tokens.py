"""Token counts without a tokenizer: an ASCII text counted kind by kind, and a text mostly in ASCII counted word by
word, give what counting them piece by piece gives."""

from __future__ import annotations

import math
import random
import string

import pytest

from bot.llm.tokens import PIECES, PUNCTUATION_PER_TOKEN, _word_tokens, text_tokens, texts_tokens


def piece_by_piece(text: str) -> float:
    """The count as PIECES defines it, one piece at a time (what every quicker path must equal)."""
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


def test_an_ascii_text_counts_as_its_pieces_do() -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \n\t_\r" * 3 + "".join(map(chr, range(32)))
    for _ in range(5_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        if rng.random() < 0.3:
            text = text.replace(" ", "a" * rng.randint(5, 30))  # long words: more than one token
        if rng.random() < 0.05:
            text += "b" * rng.randint(40, 400)  # runs longer than words are: found one by one
        if rng.random() < 0.2:
            text = text.replace("a", "1234567")  # long numbers: a token for every three digits
        assert text_tokens(text) == piece_by_piece(text), repr(text)


def test_known_counts() -> None:
    assert text_tokens("") == 0
    assert text_tokens("Register in myStudies.") == 4  # three words and the full stop
    assert text_tokens("1234567") == 3 and text_tokens("a\n\n\nb") == 3
    assert text_tokens("--> {x}") == 5  # "-->" two, then one each
    assert text_tokens("internationalisation") == 2  # 20 letters: a word and its second part
    assert text_tokens("Zürich") == piece_by_piece("Zürich") > 1  # not ASCII: counted piece by piece


def test_one_long_run_is_counted_in_one_pass() -> None:
    """A pasted hash or a cell of one repeated letter: its tokens grow with its length, its cost does not square."""
    assert text_tokens("x" * 1_000_000) == 1 + 1_000_000 // 11
    assert text_tokens("ab " + "y" * 55 + " " + "z" * 54) == 1 + 6 + 5


def test_a_text_in_other_scripts_counts_as_its_pieces_do() -> None:
    """Mostly ASCII (German, French: the ASCII words counted apart) or mostly not (Cyrillic, CJK), with the spaces,
    marks and digits of other scripts: the same count as piece by piece (but for the order its fractions are added
    in)."""
    rng = random.Random(44)
    latin = list(string.ascii_letters + string.digits + string.punctuation + " \n\t\r" * 4)
    other = ["ä", "ö", "ü", "ß", "é", "ç", "—", "„", "“", "\u00a0", "\u2009", "\u200b", "\u3000", "\u2028", "\u0085",
             "\x1c", "٥", "²", "\u0301", "中文字", "日本", "한국", "Привет", "мир", "αβγ", "नमस्ते", "שלום", "🙂"]
    for _ in range(5_000):
        mostly_ascii = rng.random() < 0.5
        pool = latin * 6 + other if mostly_ascii else latin + other * 3
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 120)))
        if rng.random() < 0.3:
            text = text.replace(" ", "a" * rng.randint(5, 30))
        assert text_tokens(text) == pytest.approx(piece_by_piece(text), rel=1e-12, abs=0), repr(text)


def test_texts_joined_by_a_space_count_as_their_sum() -> None:
    """The estimate counts a row's texts joined by a space, once: no piece runs across a space."""
    rng = random.Random(45)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \n\t\r" * 3 + "äé—中"
    for _ in range(2_000):
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 100))) for _ in range(rng.randint(1, 6))]
        assert texts_tokens(texts) == pytest.approx(sum(map(text_tokens, texts)), rel=1e-12, abs=0), texts
