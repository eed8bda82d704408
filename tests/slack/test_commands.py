"""Tests for bot.slack.commands.parsing: the text after `/judge` parsed into one request, or a CommandError."""

from __future__ import annotations

import pytest

from bot.records import Triple
from bot.slack.commands.parsing import (
    HISTORY_DEFAULT,
    HISTORY_MAX,
    USAGE,
    CommandError,
    Help,
    History,
    Inline,
    ListRubrics,
    OpenForm,
    Stats,
    parse_command,
)
from bot.slack.commands.words import STATS_DEFAULT_DAYS


@pytest.mark.parametrize("text", ["", "   ", "help", "HELP", "  help  "])
def test_empty_text_and_help_give_help(rubrics, text):
    assert parse_command(text, rubrics) == Help()


def test_rubrics_lists_the_rubrics(rubrics):
    assert parse_command("rubrics", rubrics) == ListRubrics()
    assert parse_command("Rubrics", rubrics) == ListRubrics()


def test_history_defaults_to_ten(rubrics):
    assert HISTORY_DEFAULT == 10
    assert parse_command("history", rubrics) == History(10)


@pytest.mark.parametrize(("text", "limit"), [("history 5", 5), ("history 1", 1), ("history 40", 40),
                                             ("History   7", 7)])
def test_history_takes_a_number(rubrics, text, limit):
    assert parse_command(text, rubrics) == History(limit)


@pytest.mark.parametrize("rest", ["0", "41", "x", "-3", "5.5", "1000"])
def test_history_out_of_range_names_the_range(rubrics, rest):
    with pytest.raises(CommandError) as raised:
        parse_command(f"history {rest}", rubrics)
    message = str(raised.value)
    assert f"1 to {HISTORY_MAX}" in message
    assert f"`{rest}`" in message


def test_history_with_a_superscript_digit_is_a_command_error(rubrics):
    with pytest.raises(CommandError, match="1 to 40"):
        parse_command("history ²", rubrics)


def test_stats_defaults_to_thirty_days_and_every_model(rubrics):
    assert STATS_DEFAULT_DAYS == 30
    assert parse_command("stats", rubrics) == Stats(days=30, model=None)


@pytest.mark.parametrize(("text", "expected"), [
    ("stats 7d", Stats(days=7, model=None)),
    ("stats 7D", Stats(days=7, model=None)),
    ("stats 365d", Stats(days=365, model=None)),
    ("stats all", Stats(days=None, model=None)),
    ("stats ALL", Stats(days=None, model=None)),
    ("stats all gpt-4o", Stats(days=None, model="gpt-4o")),
    ("stats 7d gpt-4o mini", Stats(days=7, model="gpt-4o mini")),
    ("stats 7d   campus-bot  ", Stats(days=7, model="campus-bot")),
    ("stats gpt-4o", Stats(days=30, model="gpt-4o")),
    ("stats gpt-4o mini", Stats(days=30, model="gpt-4o mini")),
])
def test_stats_period_and_model(rubrics, text, expected):
    assert parse_command(text, rubrics) == expected


@pytest.mark.parametrize("text", ["stats 0d", "stats 00d", "stats 0d gpt-4o"])
def test_stats_of_zero_days_is_an_error(rubrics, text):
    with pytest.raises(CommandError, match="0 days") as raised:
        parse_command(text, rubrics)
    assert "`7d`" in str(raised.value) and "`all`" in str(raised.value)


def test_rubric_name_opens_the_form(rubrics):
    command = parse_command("eth", rubrics)
    assert isinstance(command, OpenForm)
    assert command.rubric is rubrics.get("eth")
    assert command.rubric.name == "eth"


@pytest.mark.parametrize("text", ["auditor", "eth-audit", "strict", "ETH", "Auditor", "  eth  "])
def test_aliases_and_any_case_name_the_same_rubric(rubrics, text):
    command = parse_command(text, rubrics)
    assert isinstance(command, OpenForm)
    assert command.rubric.name == "eth"


def test_other_rubrics_by_name_and_alias(rubrics):
    assert parse_command("bench", rubrics).rubric.name == "benchmark"
    assert parse_command("Academic", rubrics).rubric.name == "academic"
    assert parse_command("qa", rubrics).rubric.name == "academic"


def test_unknown_rubric_suggests_the_closest(rubrics):
    with pytest.raises(CommandError) as raised:
        parse_command("etj", rubrics)
    message = str(raised.value)
    assert "Did you mean 'eth'" in message
    assert "/judge help" in message
    for rubric in rubrics:
        assert rubric.name in message


def test_unknown_rubric_without_a_close_name_gives_no_suggestion(rubrics):
    with pytest.raises(CommandError) as raised:
        parse_command("zzzzzzzz", rubrics)
    assert "Did you mean" not in str(raised.value)
    assert "No rubric named 'zzzzzzzz'" in str(raised.value)


def test_command_error_is_a_value_error():
    assert issubclass(CommandError, ValueError)


def test_inline_triple_is_split_and_stripped(rubrics):
    command = parse_command("eth  How do I register?  ||  In myStudies (ETHIS).||Use myStudies.  ", rubrics)
    assert isinstance(command, Inline)
    assert command.rubric.name == "eth"
    assert command.triple == Triple(question="How do I register?", reference="In myStudies (ETHIS).",
                                    answer="Use myStudies.")


def test_inline_with_an_alias(rubrics):
    command = parse_command("Auditor q || r || a", rubrics)
    assert isinstance(command, Inline)
    assert command.rubric.name == "eth"
    assert command.triple == Triple(question="q", reference="r", answer="a")


def test_inline_text_is_unescaped(rubrics):
    command = parse_command("eth &lt;b&gt; &amp; || R &amp;lt; || a &gt; b", rubrics)
    assert isinstance(command, Inline)
    # "&amp;lt;" is what Slack sends for a typed "&lt;": it must come back as the literal "&lt;", not "<".
    assert command.triple == Triple(question="<b> &", reference="R &lt;", answer="a > b")


def test_inline_keeps_single_pipes_in_the_answer(rubrics):
    command = parse_command("eth q || r || cat file | grep x | wc -l", rubrics)
    assert isinstance(command, Inline)
    assert command.triple.answer == "cat file | grep x | wc -l"
    assert command.triple.question == "q"
    assert command.triple.reference == "r"


def test_inline_keeps_unicode_and_newlines(rubrics):
    command = parse_command("eth ما هي عاصمة مصر؟ || القاهرة || first line\nsecond line", rubrics)
    assert command.triple == Triple(question="ما هي عاصمة مصر؟", reference="القاهرة",
                                    answer="first line\nsecond line")


@pytest.mark.parametrize(("text", "found"), [
    ("eth q || r", 2),
    ("eth q || || a", 2),
    ("eth || r || a", 2),
    ("eth q || r ||   ", 2),
    ("eth just a question", 1),
])
def test_inline_needs_three_non_empty_parts(rubrics, text, found):
    with pytest.raises(CommandError) as raised:
        parse_command(text, rubrics)
    message = str(raised.value)
    assert "`||`" in message
    assert "`/judge eth <question> || <reference answer> || <answer>`" in message
    assert f"found {found} non-empty part(s)" in message
    assert "`/judge eth`" in message


def test_inline_error_names_the_rubric_as_typed_canonically(rubrics):
    with pytest.raises(CommandError, match=r"/judge benchmark <question>"):
        parse_command("bench q || r", rubrics)


def test_usage_mentions_every_command():
    for piece in ("/judge <rubric>", "||", "/judge history", "/judge stats", "/judge rubrics", "/judge help"):
        assert piece in USAGE
    assert f"default {STATS_DEFAULT_DAYS}d" in USAGE


# -- retrieved context as a fourth part --------------------------------------------------------------------------


@pytest.fixture
def with_grounded(rubrics):
    """The shipped rubrics and `in-passages`, which reads the retrieved passages ($context)."""
    from bot.rubric import Rubric, RubricSet
    from tests.support.rubric_files import grounded

    return RubricSet([*rubrics, Rubric.model_validate(grounded())])


@pytest.mark.parametrize(("typed", "passages"), [
    ("The Mensa opens at 11.", ["The Mensa opens at 11."]),
    ("The Mensa opens at 11.\n\nThe library closes\nat 22.", ["The Mensa opens at 11.", "The library closes\nat 22."]),
    ("First.\n   \nSecond.\n\n\nThird.", ["First.", "Second.", "Third."]),
    ('["The Mensa opens at 11.", "The library || closes at 22."]', None),  # || splits the parts first
    ('["The Mensa opens at 11.", "The library closes at 22."]', ["The Mensa opens at 11.", "The library closes at 22."]),
    ("[1] The Mensa opens at 11.\n\n[2] The library closes at 22.",
     ["[1] The Mensa opens at 11.", "[2] The library closes at 22."]),  # numbered by hand: text, not JSON
])
def test_inline_takes_the_retrieved_passages_as_a_fourth_part(with_grounded, typed, passages):
    text = f"in-passages When does the Mensa open? || At 11. || At 11. || {typed}"
    if passages is None:
        with pytest.raises(CommandError, match="three parts|four parts"):
            parse_command(text, with_grounded)
        return
    command = parse_command(text, with_grounded)
    assert isinstance(command, Inline)
    assert command.triple == Triple(question="When does the Mensa open?", reference="At 11.", answer="At 11.",
                                    context=passages)


def test_inline_without_passages_for_a_rubric_that_reads_them_says_how_to_give_them(with_grounded):
    with pytest.raises(CommandError) as raised:
        parse_command("in-passages When? || At 11. || At 11.", with_grounded)
    message = str(raised.value)
    assert message.startswith("*in-passages* grades the answer against the passages retrieved for the question: give "
                              "them as a fourth part, `/judge in-passages <question> || <reference answer> || <answer> || "
                              "<retrieved context>` (a blank line between passages, or a JSON list of strings).")
    assert "`/judge in-passages` for a form" in message
    with pytest.raises(CommandError, match="found 3 non-empty part"):  # an empty fourth part gives none either
        parse_command("in-passages When? || At 11. || At 11. ||  ", with_grounded)


def test_inline_passages_for_a_rubric_that_reads_none_are_refused(with_grounded):
    with pytest.raises(CommandError) as raised:
        parse_command("eth q || r || a || d", with_grounded)
    assert str(raised.value).startswith("*eth* does not read retrieved context (its template has no `$context`), so "
                                        "it takes three parts: `/judge eth <question> || <reference answer> || "
                                        "<answer>`.")


@pytest.mark.parametrize(("typed", "why"), [
    ('["one", 2]', "is not a list of strings"),
    ('["one", "two"', "is not valid JSON"),
    ('["<!channel> *one*', "is not valid JSON"),
])
def test_inline_passages_that_open_like_json_and_are_not_are_refused_with_a_sentence(with_grounded, typed, why):
    with pytest.raises(CommandError) as raised:
        parse_command(f"in-passages q || r || a || {typed}", with_grounded)
    message = str(raised.value)
    assert message.startswith(f"The retrieved context opens like a JSON list, and {why}")
    assert message.endswith('or as plain text with a blank line between passages.')
    assert "<!channel>" not in message
