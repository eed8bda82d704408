"""Tests for the Block Kit the bot posts (bot.slack.cards, text and views), validated by slack_sdk itself."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import ContextActionsBlock

from bot.rubric import Rubric
from bot.slack.commands.parsing import USAGE
from bot.slack.text import (
    ELLIPSIS,
    FSI,
    PDI,
    RLI,
    bidi,
    chunks,
    clip,
    code_block,
    date,
    escape,
    permalink,
    shown,
    unescape,
)
from bot.slack.views.card import (
    CORRECT,
    DETAILS,
    FEEDBACK,
    REJUDGE,
    RETRY,
    Card,
    error_card,
    full_detail,
    placeholder,
    result_card,
)
from bot.slack.views.commands import (
    FORM,
    FormContext,
    FormSeal,
    form_values,
    form_view,
    help_message,
    history_message,
    stats_message,
)
from bot.slack.views.details import reply_view
from bot.slack.views.home import HOME_JUDGMENTS, home_view
from bot.slack.views.size_limits import INPUT_LIMIT, MESSAGE_BLOCKS, MESSAGE_CHARS, SECTION_LIMIT, VIEW_BLOCKS
from bot.store import Figures, Judgment, Said
from tests.support.rubric_files import SHIPPED
from tests.support.scored_judgments import ETH_CORRECT, scored
from tests.support.slack_messages import feedback, table_rows
from tests.support.slack_server.block_checks import block_problems

TEAM_URL = "https://judgebot-test.slack.com/"
CUT_NOTE = "_(cut here: the full text is in the thread)_"
UNTRUSTED = "<!channel> <@U123> & <https://evil|x>"
ARABIC_QUESTION = "ما هي عاصمة مصر؟"
ARABIC_ANSWER = "القاهرة هي عاصمة مصر."

ETH_GENERIC = {"correctness": 0, "completeness": 1, "result_tag": "Generic",
               "reasoning": "Generic advice: the ground truth names myStudies."}
BENCHMARK = {"Factual Accuracy": 5, "Relevance": 4, "Clarity": 4, "Language Consistency": 4, "Conciseness": 4,
             "Overall": 4.5}  # overall_weighted = 0.4 * 5 + 0.15 * 4 * 4 = 4.4
ACADEMIC = {
    "revision_attempt": 1,
    "reference_facts": ["36 credits in total", "a 6-credit thesis"],
    "key_aspects": ["thesis track", "exam track"],
    "evaluation": {"coverage": {"score": 3, "missing_aspects": ["exam track", "comprehensive exam"]},
                   "factuality": {"score": 5, "incorrect_facts": []},
                   "clarity": {"score": 4, "issues": None}},
    "proposed_revision": "The thesis track needs 36 credits: 30 of coursework and a 6-credit thesis.",
    "termination_reason": "max_revisions",
}
OUTPUTS = {"eth": ETH_CORRECT, "benchmark": BENCHMARK, "academic": ACADEMIC}

# --- helpers ---------------------------------------------------------------------------------------------------


def unscored(rubric: Rubric, status: str, error: str | None, **overrides: Any) -> Judgment:
    """An error or invalid judgment: no output, no score."""
    return scored(rubric, OUTPUTS[rubric.name], **{
        "status": status, "error": error, "output": None, "derived": None, "headline": None, "passed": None,
        "label": None, "tag": None, **overrides})


def message_of(card: Card) -> dict[str, Any]:
    """The card as sent, validated by slack_sdk block by block, within Block Kit's limits."""
    for block in card.blocks:
        block.to_dict()  # raises SlackObjectFormationError when a block breaks Block Kit's rules
    message = card.as_message()
    assert card.text.strip()
    assert 0 < len(message["blocks"]) <= MESSAGE_BLOCKS
    return message


def sections(message: dict[str, Any]) -> list[str]:
    """The mrkdwn text of every section block of a message or view."""
    return [block["text"]["text"] for block in message["blocks"] if block["type"] == "section" and "text" in block]


def section_fields(message: dict[str, Any]) -> list[str]:
    return [f["text"] for block in message["blocks"] if block["type"] == "section" for f in block.get("fields", [])]


def dumped(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False)


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """action_id -> value of every button."""
    return {element["action_id"]: element["value"] for block in message["blocks"] if block["type"] == "actions"
            for element in block["elements"]}


def section_named(message: dict[str, Any], label: str) -> str:
    found = [text for text in sections(message) if text.startswith(f"*{label}*")]
    assert len(found) == 1, sections(message)
    return found[0]


def plain(text: str) -> str:
    """mrkdwn shown back as the original text: isolates removed, escaping undone."""
    return unescape(text.replace(RLI, "").replace(PDI, ""))


def thread_texts(cards: list[Card]) -> dict[str, str]:
    """label -> the full text, put back together from the thread replies of full_detail."""
    bodies: dict[str, list[str]] = {}
    for card in cards:
        for text in sections(message_of(card)):
            heading, _, body = text.partition("\n")
            label = heading.split("*")[1]
            bodies.setdefault(label, []).append(body)
    return {label: plain("".join(parts)) for label, parts in bodies.items()}


# --- result cards of the three rubrics --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["eth", "benchmark", "academic"])
def test_scored_card_of_each_rubric_is_valid_block_kit(rubrics, name):
    rubric = rubrics.get(name)
    judgment = scored(rubric, OUTPUTS[name])
    card = result_card(judgment, rubric)
    message = message_of(card)
    assert message["text"] == card.text
    assert card.text.startswith(f"{rubric.title}: {judgment.label}")
    assert message["blocks"][0] == {"type": "header", "text": {"type": "plain_text", "text": rubric.title,
                                                               "emoji": True}}
    assert all(len(text) <= SECTION_LIMIT for text in sections(message))
    assert card.overflow == []
    footer = message["blocks"][-1]
    assert footer["type"] == "context"
    footer_text = footer["elements"][0]["text"]
    assert "judge `judge-test`" in footer_text and "1,020 tokens" in footer_text and "2.3 s" in footer_text
    assert f"`{rubric.content_hash[:8]}`" in footer_text and footer_text.endswith("#42")


def test_eth_card_shows_the_verdict(rubrics):
    eth = rubrics.get("eth")
    message = message_of(result_card(scored(eth, ETH_CORRECT), eth))
    headline = message["blocks"][1]["text"]["text"]
    assert headline == "✅ *Correct · correctness 2/2 · completeness 2/2*\n100/100 · passed"
    fields = section_fields(message)
    assert "*correctness*\n2 / 2" in fields
    assert "*completeness*\n2 / 2" in fields
    assert "*result tag*\nCorrect" in fields
    assert "*Model under test*\ncampus-bot-v2" in fields
    assert "*Asked by*\n<@U0ASKER>" in fields
    assert section_named(message, "reasoning") == f"*reasoning*\n{ETH_CORRECT['reasoning']}"
    assert section_named(message, "Question") == "*Question*\nHow do I register for my exams?"
    assert section_named(message, "Reference") == "*Reference*\nIn myStudies (ETHIS)."
    assert section_named(message, "Answer") == "*Answer*\nUse myStudies."
    assert "❌" not in dumped(message)


def test_a_failing_judgment_shows_a_cross(rubrics):
    eth = rubrics.get("eth")
    judgment = scored(eth, ETH_GENERIC)
    assert judgment.passed is False
    message = message_of(result_card(judgment, eth))
    headline = message["blocks"][1]["text"]["text"]
    assert headline == "❌ *Generic · correctness 0/2 · completeness 1/2*\n25/100 · did not pass"
    assert "✅" not in dumped(message)


def test_benchmark_card_shows_the_weighted_overall(rubrics):
    benchmark = rubrics.get("benchmark")
    judgment = scored(benchmark, BENCHMARK)
    assert judgment.derived == {"overall_weighted": pytest.approx(4.4)}
    message = message_of(result_card(judgment, benchmark))
    headline = message["blocks"][1]["text"]["text"]
    assert headline == "✅ *Overall 4.4 / 5 (judge 4.5)*\n85/100 · passed"
    fields = section_fields(message)
    assert "*overall weighted*\n4.4" in fields
    assert "*Factual Accuracy*\n5 / 5" in fields
    assert "*Language Consistency*\n4 / 5" in fields
    assert "*Overall*\n4.5 / 5" in fields


def test_academic_card_shows_nested_scores_lists_and_the_revision(rubrics):
    academic = rubrics.get("academic")
    judgment = scored(academic, ACADEMIC)
    assert judgment.passed is False
    message = message_of(result_card(judgment, academic))
    assert message["blocks"][1]["text"]["text"] == (
        "❌ *coverage 3/5 · factuality 5/5 · clarity 4/5*\n75/100 · did not pass")
    fields = section_fields(message)
    assert "*evaluation › coverage › score*\n3 / 5" in fields
    assert "*evaluation › factuality › score*\n5 / 5" in fields
    assert "*evaluation › clarity › score*\n4 / 5" in fields
    assert "*evaluation › clarity › issues*\n—" in fields  # null
    assert "*termination reason*\nmax_revisions" in fields  # an enum is short
    assert section_named(message, "evaluation › coverage › missing aspects") == (
        "*evaluation › coverage › missing aspects*\n• exam track\n• comprehensive exam")
    assert section_named(message, "evaluation › factuality › incorrect facts") == (
        "*evaluation › factuality › incorrect facts*\n_none_")
    assert section_named(message, "key aspects") == "*key aspects*\n• thesis track\n• exam track"
    assert section_named(message, "proposed revision") == f"*proposed revision*\n{ACADEMIC['proposed_revision']}"


def test_scored_card_buttons_carry_the_judgment_id(rubrics):
    eth = rubrics.get("eth")
    message = message_of(result_card(scored(eth, ETH_CORRECT), eth))
    assert buttons(message) == {CORRECT: "42", REJUDGE: "42", DETAILS: "42"}
    assert feedback(message) == {"agree": "agree:42", "disagree": "disagree:42"}  # Slack's own thumbs
    [thumbs] = [block for block in message["blocks"] if block["type"] == "context_actions"]
    ContextActionsBlock(**thumbs).validate_json()  # as slack_sdk validates Block Kit
    assert (FEEDBACK, REJUDGE, DETAILS) == ("judgebot_feedback", "judgebot_rejudge", "judgebot_details")


def test_no_details_button_without_a_raw_reply(rubrics):
    eth = rubrics.get("eth")
    message = message_of(result_card(scored(eth, ETH_CORRECT, raw_reply=None), eth))
    assert set(buttons(message)) == {CORRECT, REJUDGE}


def test_votes_are_shown_when_there_are_any(rubrics):
    eth = rubrics.get("eth")
    with_votes = message_of(result_card(scored(eth, ETH_CORRECT), eth, votes=(2, 1)))
    assert with_votes["blocks"][-1] == {"type": "context", "elements": [
        {"type": "mrkdwn", "text": "People: :+1: 2 agree · :-1: 1 disagree"}]}
    without = message_of(result_card(scored(eth, ETH_CORRECT), eth))
    assert "People:" not in dumped(without)
    assert len(with_votes["blocks"]) == len(without["blocks"]) + 1


def test_a_card_without_its_rubric_still_renders(rubrics):
    eth = rubrics.get("eth")
    judgment = scored(eth, ETH_CORRECT)
    card = result_card(judgment, None)
    message = message_of(card)
    assert message["blocks"][0]["text"]["text"] == "eth"  # the rubric's name stands in for its title
    assert card.text.startswith("eth: Correct · correctness 2/2 · completeness 2/2")
    fields = section_fields(message)
    assert "*correctness*\n2" in fields  # no maximum known without the rubric
    assert "*result tag*\nCorrect" in fields  # a short one-line text is shown as a tag would be
    assert section_named(message, "reasoning").startswith("*reasoning*\n")
    assert set(buttons(message)) == {CORRECT, REJUDGE, DETAILS}


def test_a_card_with_more_fields_than_a_message_holds_sends_the_rest_to_the_thread(rubrics):
    eth = rubrics.get("eth")
    output = {f"note_{i:02d}": f"a remark of more than forty characters, number {i}" for i in range(60)}
    judgment = scored(eth, ETH_CORRECT, output=output, derived={})
    card = result_card(judgment, None, votes=(1, 0))
    message = message_of(card)
    assert len(message["blocks"]) <= MESSAGE_BLOCKS
    assert len(json.dumps(message["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS
    assert "More than a message can hold" in dumped(message)
    assert message["blocks"][-1]["elements"][0]["text"].startswith("People:")  # the tail is kept
    assert set(buttons(message)) == {CORRECT, REJUDGE, DETAILS}
    label, text = card.overflow[-1]
    assert label == "Everything the judge returned"
    assert json.loads(text) == output
    assert json.loads(thread_texts(full_detail(card.overflow))[label]) == output


# --- error cards ------------------------------------------------------------------------------------------------


def test_error_card_has_no_score_and_offers_retry(rubrics):
    eth = rubrics.get("eth")
    judgment = unscored(eth, "error", "the judge did not answer", raw_reply=None)
    card = result_card(judgment, eth)
    assert error_card(judgment, eth).as_message() == card.as_message()
    message = message_of(card)
    text = dumped(message)
    assert "the judge did not answer" in text
    assert "could not grade" in text
    for score_text in ("/100", "passed", "✅", "❌", "correctness"):
        assert score_text not in text
    assert buttons(message) == {RETRY: "42"}
    assert RETRY == "judgebot_retry"
    assert card.text == f"{eth.title}: the judge could not grade this answer"
    assert section_named(message, "Answer") == "*Answer*\nUse myStudies."


def test_error_card_with_a_reply_offers_details(rubrics):
    eth = rubrics.get("eth")
    judgment = unscored(eth, "error", "rubric formula: division by zero", raw_reply='{"x": 1}')
    message = message_of(result_card(judgment, eth))
    assert buttons(message) == {RETRY: "42", DETAILS: "42"}


def test_invalid_card_says_the_reply_broke_the_rules(rubrics):
    eth = rubrics.get("eth")
    error = "the judge's reply broke the rubric after one repair: correctness is 2 exactly when result_tag is Correct"
    judgment = unscored(eth, "invalid", error, raw_reply='{"correctness": 2, "result_tag": "Generic"}')
    card = result_card(judgment, eth)
    message = message_of(card)
    text = dumped(message)
    assert "broke the rubric's rules" in text
    assert "correctness is 2 exactly when result_tag is Correct" in text
    assert "/100" not in text
    assert buttons(message) == {RETRY: "42", DETAILS: "42"}
    assert "broke the rubric's rules" in card.text


def test_error_card_escapes_the_error_and_works_without_a_rubric(rubrics):
    eth = rubrics.get("eth")
    judgment = unscored(eth, "error", f"upstream said {UNTRUSTED}")
    message = message_of(error_card(judgment, None))
    assert message["blocks"][0]["text"]["text"] == "eth"
    text = dumped(message)
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text


# --- untrusted text ---------------------------------------------------------------------------------------------


def test_untrusted_text_is_escaped_everywhere_in_the_blocks(rubrics):
    eth = rubrics.get("eth")
    output = {**ETH_CORRECT, "reasoning": f"The answer said {UNTRUSTED}"}
    judgment = scored(eth, output, question=UNTRUSTED, reference=UNTRUSTED, answer=UNTRUSTED,
                      model_name=UNTRUSTED)
    message = message_of(result_card(judgment, eth))
    text = dumped(message["blocks"])
    for raw in ("<!channel>", "<@U123>", "<https://evil"):
        assert raw not in text
    escaped = escape(UNTRUSTED)
    assert escaped == "&lt;!channel&gt; &lt;@U123&gt; &amp; &lt;https://evil|x&gt;"
    assert section_named(message, "Answer") == f"*Answer*\n{escaped}"
    assert section_named(message, "Question") == f"*Question*\n{escaped}"
    assert section_named(message, "reasoning") == f"*reasoning*\nThe answer said {escaped}"
    assert f"*Model under test*\n{escaped}" in section_fields(message)
    assert "<@U0ASKER>" in text  # the mention the bot makes itself stays a mention


def test_untrusted_model_name_is_escaped_in_the_fallback_text(rubrics):
    eth = rubrics.get("eth")
    card = result_card(scored(eth, ETH_CORRECT, model_name=UNTRUSTED), eth)
    assert "<!channel>" not in card.as_message()["text"]


def test_placeholder_escapes_the_model_and_names_the_asker(rubrics):
    eth = rubrics.get("eth")
    card = placeholder(eth, "U0ASKER", UNTRUSTED)
    message = message_of(card)
    text = sections(message)[0]
    assert text.startswith(f":hourglass_flowing_sand: Judging with *{eth.title}* for <@U0ASKER>")
    assert "<!channel>" not in text and escape(UNTRUSTED) in text
    assert card.text == f"Judging with {eth.title}…"
    anonymous = sections(message_of(placeholder(eth, None, None)))[0]
    assert anonymous == f":hourglass_flowing_sand: Judging with *{eth.title}*…"


# --- right-to-left text -----------------------------------------------------------------------------------------


def test_arabic_lines_are_isolated_and_otherwise_unchanged(rubrics):
    eth = rubrics.get("eth")
    answer = f"{ARABIC_ANSWER}\nCairo, in English.\n{ARABIC_QUESTION}"
    message = message_of(result_card(scored(eth, ETH_CORRECT, answer=answer, question=ARABIC_QUESTION), eth))
    assert section_named(message, "Answer") == (
        f"*Answer*\n{RLI}{ARABIC_ANSWER}{PDI}\nCairo, in English.\n{RLI}{ARABIC_QUESTION}{PDI}")
    assert section_named(message, "Question") == f"*Question*\n{RLI}{ARABIC_QUESTION}{PDI}"
    assert plain(section_named(message, "Answer").partition("\n")[2]) == answer


def test_bidi_isolates_lines_with_right_to_left_text_or_direction_controls():
    assert bidi("hello") == "hello"
    assert bidi("123 456") == "123 456"  # no strong direction
    assert bidi("שלום עולם") == f"{RLI}שלום עולם{PDI}"
    assert bidi("42 طالبا") == f"{RLI}42 طالبا{PDI}"  # digits are weak: the Arabic decides
    assert bidi("ETH: القاهرة") == f"{FSI}ETH: القاهرة{PDI}"  # Latin first: left to right, yet held apart
    assert bidi(f"a\n{ARABIC_ANSWER}\n\nb") == f"a\n{RLI}{ARABIC_ANSWER}{PDI}\n\nb"


def test_bidi_holds_an_open_override_and_drops_an_isolate_end_that_would_close_its_own():
    assert bidi("model \u202eevil") == f"{FSI}model \u202eevil{PDI}"  # the isolate's end ends the override too
    assert bidi(f"x{PDI}\u202ey") == f"{FSI}x\u202ey{PDI}"  # a stray end would let the override out
    assert bidi(f"x{FSI}y") == f"{FSI}x{FSI}y{PDI}{PDI}"  # one left open is closed before ours


def test_escape_neutralises_code_fences_and_drops_nul_and_lone_surrogates():
    assert escape("a ```b``` ````c") == "a `\u200b`\u200b`b`\u200b`\u200b` `\u200b`\u200b`\u200b`c"
    assert escape("a`b` ``c``") == "a`b` ``c``"  # inline code stays
    assert escape("nul\x00 lone\ud800 pair😀") == "nul lone pair😀"


def test_a_code_block_keeps_its_fences_whatever_the_text_starts_or_ends_with():
    assert code_block("print(1)") == "```print(1)```"
    assert code_block("`x` and `y`") == "```\u200b`x` and `y`\u200b```"


# --- long texts -------------------------------------------------------------------------------------------------


LONG_ANSWER = ("Register in <myStudies> & check ETHIS before the deadline. " * 200)[:10_000]
LONG_REASONING = ("The answer misses the & registration window <b> and names no portal. " * 80)[:5_000]


def test_a_long_answer_is_cut_and_given_whole_in_the_thread(rubrics):
    eth = rubrics.get("eth")
    card = result_card(scored(eth, ETH_CORRECT, answer=LONG_ANSWER), eth)
    message = message_of(card)
    answer = section_named(message, "Answer")
    assert len(answer) <= SECTION_LIMIT
    assert answer.endswith(f"{ELLIPSIS}\n{CUT_NOTE}")
    assert len(answer) < 1300  # the card keeps the answer short; the thread has all of it
    assert card.overflow == [("Answer", LONG_ANSWER)]
    thread = full_detail(card.overflow)
    for reply in thread:
        reply_message = message_of(reply)
        assert all(len(text) <= SECTION_LIMIT for text in sections(reply_message))
        assert len(json.dumps(reply_message["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS
    assert thread_texts(thread) == {"Answer": LONG_ANSWER}
    parts = [part for reply in thread for part in sections(reply.as_message())]
    assert parts[0].startswith(f"*Answer* (1/{len(parts)})\n")


def test_a_long_reasoning_is_a_markdown_block_while_a_long_answer_overflows_to_the_thread(rubrics):
    eth = rubrics.get("eth")
    output = {**ETH_CORRECT, "reasoning": LONG_REASONING}
    card = result_card(scored(eth, output, answer=LONG_ANSWER), eth)
    assert card.overflow == [("Answer", LONG_ANSWER)]  # 5,000 characters of reasoning fit a markdown block
    reasoning = card.blocks[[b.type for b in card.blocks].index("divider") + 1].to_dict()
    assert reasoning["type"] == "markdown" and reasoning["text"].startswith("**reasoning**\n\n")
    assert "misses the &amp; registration window &lt;b&gt; and names no portal\\." in reasoning["text"]
    assert CUT_NOTE.strip() not in reasoning["text"]
    assert all(len(text) <= SECTION_LIMIT for text in sections(message_of(card)))
    assert thread_texts(full_detail(card.overflow)) == {"Answer": LONG_ANSWER}


def test_a_short_reasoning_stays_a_section(rubrics):
    eth = rubrics.get("eth")
    card = result_card(scored(eth, {**ETH_CORRECT, "reasoning": "Names myStudies."}), eth)
    assert "markdown" not in [b.type for b in card.blocks] and "*reasoning*\nNames myStudies." in sections(
        message_of(card))


@pytest.mark.parametrize("reasoning", [("The answer names no portal.\n" * 800)[:20_000], "x" * 20_000])
def test_a_cut_long_field_stays_within_the_markdown_limit(rubrics, reasoning):
    eth = rubrics.get("eth")
    card = result_card(scored(eth, {**ETH_CORRECT, "reasoning": reasoning}), eth)
    assert card.overflow == [("reasoning", reasoning)]
    [markdown] = [block.to_dict() for block in card.blocks if block.type == "markdown"]
    assert len(markdown["text"]) <= 12_000 and markdown["text"].endswith("_(cut here: the full text is in the thread)_")
    assert all(len(block.text.text) <= SECTION_LIMIT for block in card.blocks
               if block.type == "section" and block.text is not None)
    assert block_problems(message_of(card)["blocks"]) == []
    if "\n" in reasoning:  # its lines stay lines: a hard break (a backslash at the end) each
        assert "portal\\.\\\nThe answer" in markdown["text"]


def test_markdown_of_the_judge_is_literal(rubrics):
    eth = rubrics.get("eth")
    hostile = "[click here](https://evil.example) ![x](https://evil.example/i.png) <!channel> <@U0BOSS> **bold**\n" * 60
    card = result_card(scored(eth, {**ETH_CORRECT, "reasoning": hostile}), eth)
    [markdown] = [block.to_dict()["text"] for block in card.blocks if block.type == "markdown"]
    assert "<" not in markdown and "](" not in markdown and "**bold" not in markdown
    assert "\\[click here\\]\\(https\\:\\/\\/evil\\.example\\)" in markdown
    assert "&lt;\\!channel&gt; &lt;\\@U0BOSS&gt; \\*\\*bold\\*\\*" in markdown


def test_full_detail_splits_many_texts_over_several_messages():
    texts = [(f"Text {i}", f"paragraph {i} & more\n" * 700) for i in range(12)]
    thread = full_detail(texts)
    assert len(thread) > 1
    for reply in thread:
        message = message_of(reply)
        assert len(message["blocks"]) <= MESSAGE_BLOCKS - 1
        assert all(len(text) <= SECTION_LIMIT for text in sections(message))
    assert thread_texts(thread) == dict(texts)
    assert full_detail([]) == []


def test_full_detail_of_short_arabic_lines_stays_within_the_section_limit():
    text = "\n".join(["نعم"] * 2000)
    thread = full_detail([("Answer", text)])
    for reply in thread:
        assert all(len(section) <= SECTION_LIMIT for section in sections(message_of(reply)))
    assert thread_texts(thread) == {"Answer": text}


# --- the judge's reply ------------------------------------------------------------------------------------------


def test_reply_view_pretty_prints_json(rubrics):
    eth = rubrics.get("eth")
    output = {**ETH_CORRECT, "reasoning": "Uses <ETHIS> & myStudies"}
    judgment = scored(eth, output, raw_reply=json.dumps(output))
    view = reply_view(judgment).to_dict()
    assert view["type"] == "modal"
    assert view["title"]["text"] == "Judge's reply"
    intro, code = sections(view)
    assert intro.startswith(f"*eth* {eth.version} · judge `judge-test` · judgment #42 · status *scored*")
    pretty = json.dumps(output, ensure_ascii=False, indent=2)
    assert code == f"```{escape(pretty)}```"
    assert '\n  "correctness": 2,\n' in code


def test_reply_view_shows_a_non_json_reply_as_it_is(rubrics):
    eth = rubrics.get("eth")
    raw = "Sorry, I can't grade this. <b>really</b>"
    view = reply_view(unscored(eth, "invalid", "no JSON object found in the reply", raw_reply=raw)).to_dict()
    assert sections(view)[1] == f"```{escape(raw)}```"
    assert "status *invalid*" in sections(view)[0]


def test_a_huge_reply_is_cut_within_the_modal_limits(rubrics):
    eth = rubrics.get("eth")
    raw = "".join(f"line {i:07d} of a reply that never ends\n" for i in range(10_000))[:400_000]
    assert len(raw) == 400_000
    view = reply_view(scored(eth, ETH_CORRECT, raw_reply=raw)).to_dict()  # to_dict validates the view
    assert len(view["blocks"]) <= VIEW_BLOCKS
    assert all(len(text) <= SECTION_LIMIT for text in sections(view))
    last = view["blocks"][-1]
    assert last["type"] == "context"
    assert "Cut" in last["elements"][0]["text"] and "400,000 characters" in last["elements"][0]["text"]
    shown_text = "".join(text.removeprefix("```").removesuffix("```") for text in sections(view)[1:])
    assert raw.startswith(shown_text)


def test_reply_view_of_an_arabic_reply_stays_within_the_section_limit(rubrics):
    academic = rubrics.get("academic")
    output = {**ACADEMIC, "reference_facts": [f"حقيقة رقم {i} عن الساعات المعتمدة" for i in range(200)]}
    view = reply_view(scored(academic, output, raw_reply=json.dumps(output, ensure_ascii=False)))
    assert all(len(text) <= SECTION_LIMIT for text in sections(view.to_dict()))


# --- text.py ----------------------------------------------------------------------------------------------------


def test_escape_and_unescape():
    assert escape("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d"
    assert unescape(escape(UNTRUSTED)) == UNTRUSTED
    assert unescape("&amp;lt;") == "&lt;"  # a typed "&lt;" stays literal


def test_clip_cuts_at_a_word_boundary():
    assert clip("alpha beta gamma delta", 100) == ("alpha beta gamma delta", False)
    assert clip("alpha beta gamma delta", 22) == ("alpha beta gamma delta", False)
    assert clip("alpha beta gamma delta", 12) == ("alpha beta…", True)
    assert clip("alpha beta gamma delta", 17) == ("alpha beta gamma…", True)
    assert clip("x" * 20, 10) == ("x" * 9 + ELLIPSIS, True)  # no word boundary near the end: a hard cut
    for limit in range(1, 40):
        text, was_cut = clip("the quick brown fox jumps over the lazy dog", limit)
        assert len(text) <= limit and was_cut


@pytest.mark.parametrize("limit", [1, 2, 5, 10, 99, 100, 1155, 2948])
def test_shown_never_exceeds_the_limit(limit):
    for text in ("&" * 5000, "<>" * 3000, UNTRUSTED * 200, f"{ARABIC_ANSWER}\n" * 400, "&" * 30):
        rendered, was_cut = shown(text, limit)
        assert len(rendered) <= limit
        assert was_cut == (rendered != escape(text))


def test_a_section_and_a_fallback_text_are_cut_to_slacks_limits_should_a_caller_not_have():
    from bot.slack.views.blocks import message, section

    built = message([section("word " * 1000)], "word " * 10_000)
    assert len(built["blocks"][0]["text"]["text"]) <= SECTION_LIMIT and len(built["text"]) <= 40_000


def test_shown_leaves_short_text_whole_and_escaped():
    assert shown(UNTRUSTED, 100) == (escape(UNTRUSTED), False)
    assert shown(ARABIC_ANSWER, 100) == (f"{RLI}{ARABIC_ANSWER}{PDI}", False)
    assert shown("one two three four five six seven", 20) == ("one two three four…", True)
    rendered, was_cut = shown("a<b a<b a<b a<b", 12)  # 15 characters fit, but not once escaped: cut again
    assert was_cut and len(rendered) <= 12 and rendered.startswith("a&lt;") and "<" not in rendered


def test_chunks_rejoin_to_the_original():
    text = "".join(f"line {i} {'x' * (i % 37)}\n" for i in range(500)) + "tail without newline " * 300
    pieces = chunks(text, 1000)
    assert "".join(pieces) == text
    assert all(0 < len(piece) <= 1000 for piece in pieces)
    assert all(piece.endswith("\n") for piece in pieces[:5])  # cut at line ends where there are lines
    assert chunks("", 10) == [""]
    assert chunks("short", 10) == ["short"]
    assert chunks("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


def test_permalink():
    assert permalink(TEAM_URL, "C0GENERAL", "1712345678.123456") == (
        "https://judgebot-test.slack.com/archives/C0GENERAL/p1712345678123456")
    assert permalink(TEAM_URL.rstrip("/"), "C0GENERAL", "1712345678.123456", "1712345678.123456") == (
        "https://judgebot-test.slack.com/archives/C0GENERAL/p1712345678123456")
    assert permalink(TEAM_URL, "C0GENERAL", "1712345678.123456", "1712340000.000100") == (
        "https://judgebot-test.slack.com/archives/C0GENERAL/p1712345678123456"
        "?thread_ts=1712340000.000100&cid=C0GENERAL")
    assert permalink(None, "C0GENERAL", "1712345678.123456") is None
    assert permalink("", "C0GENERAL", "1712345678.123456") is None


def test_date_is_a_slack_date_token_in_utc():
    # 2024-01-02 03:04:05 UTC is 1704067200 (2024-01-01) + 86400 + 3 * 3600 + 4 * 60 + 5 seconds after the epoch.
    assert date(datetime(2024, 1, 2, 3, 4, 5)) == "<!date^1704164645^{date_short_pretty} {time}|2024-01-02 03:04 UTC>"


# --- views ------------------------------------------------------------------------------------------------------


def test_help_lists_every_rubric_and_the_usage(rubrics):
    message = help_message(rubrics)
    text = dumped(message)
    assert message["text"]
    assert sections(message)[0].endswith(USAGE)
    assert len(rubrics) == len(SHIPPED)
    for rubric in rubrics:
        assert f"• `{rubric.name}`" in text
        for alias in rubric.aliases:
            assert f"`{alias}`" in text
    assert "`/judge history [N]`" in text and "`/judge stats" in text


SEAL = FormSeal("test-signing-secret")


def test_form_view_preselects_the_rubric_and_the_remembered_model(rubrics):
    eth = rubrics.get("eth")
    context = FormContext(team_id="T0TEST", channel_id="C0GENERAL",
                          response_url="https://hooks.slack.test/commands/T0TEST/1/abc")
    view = form_view(rubrics, eth, model_name="campus-bot-v2", metadata=SEAL.seal(context)).to_dict()
    assert view["type"] == "modal" and view["callback_id"] == FORM
    blocks = {block["block_id"]: block for block in view["blocks"]}
    assert list(blocks) == ["rubric", "model", "question", "reference", "answer", "context"]
    select = blocks["rubric"]["element"]
    assert select["initial_option"]["value"] == "eth"
    assert [option["value"] for option in select["options"]] == [name for name in SHIPPED if name != "pairwise"]
    assert blocks["model"]["element"]["initial_value"] == "campus-bot-v2"
    assert blocks["model"]["optional"] is True
    for name in ("question", "reference", "answer", "context"):
        element = blocks[name]["element"]
        assert element["multiline"] is True and element["max_length"] == INPUT_LIMIT == 3000
        assert element["action_id"] == name
    assert blocks["context"]["optional"] is True and blocks["context"]["label"]["text"] == "Retrieved context"
    assert "blank line between passages" in blocks["context"]["hint"]["text"]
    assert "JSON list of strings" in blocks["context"]["hint"]["text"]
    assert SEAL.open(view["private_metadata"]) == context


def test_form_view_without_a_remembered_model(rubrics):
    academic = rubrics.get("academic")
    context = FormContext(team_id="T1", channel_id="C1")
    view = form_view(rubrics, academic, model_name=None, metadata=SEAL.seal(context)).to_dict()
    blocks = {block["block_id"]: block for block in view["blocks"]}
    assert "initial_value" not in blocks["model"]["element"]
    assert blocks["rubric"]["element"]["initial_option"]["value"] == "academic"
    assert SEAL.open(view["private_metadata"]) == context
    assert json.loads(view["private_metadata"].partition(".")[2]) == {"team_id": "T1", "channel_id": "C1"}


def submitted(view: dict[str, Any], *, rubric: str, model: str = "", question: str = "", reference: str = "",
              answer: str = "") -> dict[str, Any]:
    """The view of a view_submission, with its state shaped as Slack sends it (as tests/support/slack_side.py submits)."""
    values = {
        "rubric": {"rubric": {"type": "static_select", "selected_option": {"value": rubric}}},
        "model": {"model": {"type": "plain_text_input", "value": model or None}},
        **{name: {name: {"type": "plain_text_input", "value": value or None}}
           for name, value in (("question", question), ("reference", reference), ("answer", answer))},
    }
    return {**view, "id": "V0FORM", "state": {"values": values}}


def test_form_values_reads_a_submission(rubrics):
    eth = rubrics.get("eth")
    view = form_view(rubrics, eth, model_name=None, metadata=SEAL.seal(FormContext(team_id="T1", channel_id="C1")))
    view = view.to_dict()
    filled = submitted(view, rubric="benchmark", model="  gpt-4o mini ", question=" Q?\n", reference="R",
                       answer=f"  {ARABIC_ANSWER}\nline two  ")
    assert form_values(filled) == {"rubric": "benchmark", "model": "gpt-4o mini", "question": "Q?",
                                   "reference": "R", "answer": f"{ARABIC_ANSWER}\nline two", "context": ""}
    blank = submitted(view, rubric="eth")  # as a form opened before it had a context field
    assert form_values(blank) == {"rubric": "eth", "model": "", "question": "", "reference": "", "answer": "",
                                  "context": ""}
    blank["state"]["values"]["context"] = {"context": {"type": "plain_text_input", "value": " P1\n\nP2\x00 "}}
    assert form_values(blank)["context"] == "P1\n\nP2"
    blank["state"]["values"]["rubric"]["rubric"]["selected_option"] = None
    assert form_values(blank)["rubric"] == ""


def test_history_links_each_judgment_to_its_card(rubrics):
    eth = rubrics.get("eth")
    judgments = [
        scored(eth, ETH_CORRECT, id=43, message_ts="1712345678.123456"),
        scored(eth, ETH_GENERIC, id=42, message_ts="1712345600.000100", thread_ts="1712340000.000200"),
        unscored(eth, "error", "the judge did not answer", id=41, question=f"Who? {UNTRUSTED}"),
    ]
    message = history_message(judgments, "C0GENERAL", TEAM_URL)
    entries = sections(message)
    assert entries[0] == "*Latest 3 judgment(s) in <#C0GENERAL>*"
    assert entries[1].startswith("✅ *eth* · campus-bot-v2 · Correct · correctness 2/2 · completeness 2/2\n")
    assert "<https://judgebot-test.slack.com/archives/C0GENERAL/p1712345678123456|card>" in entries[1]
    assert "_How do I register for my exams?_" in entries[1]
    assert date(datetime(2024, 5, 6, 7, 8, 9)) in entries[1]
    assert entries[2].startswith("❌ *eth*")
    assert ("<https://judgebot-test.slack.com/archives/C0GENERAL/p1712345600000100"
            "?thread_ts=1712340000.000200&cid=C0GENERAL|card>") in entries[2]
    assert entries[3].startswith(":warning: *eth* · campus-bot-v2 · judge error\n")
    assert "|card>" not in entries[3]  # no message to link to
    assert "<!channel>" not in entries[3] and escape(UNTRUSTED) in entries[3]
    assert all("· <@U0ASKER>" in entry for entry in entries[1:])  # a channel's list names who asked
    assert "<#C0GENERAL>" not in "".join(entries[1:])  # ... but not the channel it is about
    no_url = history_message(judgments, "C0GENERAL", None)
    assert "|card>" not in dumped(no_url)


def test_empty_history_says_so():
    message = history_message([], "C0QUIET", TEAM_URL)
    assert sections(message) == ["No judgments in <#C0QUIET> yet. Try `/judge help`."]


def test_stats_message_shows_the_figures():
    # people said: an Agree vote on a pass and one on a fail, a correction that passes a pass and one that fails it
    said = [Said(True, True, True, "c1", 1), Said(False, True, True, "c2", 1), Said(True, True, False, "c3", 1),
            Said(True, False, False, "c4", 1)]
    figures = [Figures("m1", "eth", cases=5, scored=4, mean_headline=62.5, passed=2, errors=1,
                       tags={"Correct": 2, "Generic": 1, "Refusal": 1}, votes=2, agreeing=2, said=said),
               Figures(None, "benchmark", cases=1, scored=0, errors=1)]
    message = stats_message(figures, "C0GENERAL", days=7, model=None)
    assert sections(message) == ["*Stats in <#C0GENERAL>, last 7 days*"]
    # no row was reused from the cache or left unsure: those columns are left out
    assert table_rows(message) == [
        ["Model", "Rubric", "Cases", "Mean /100", "Pass", "Judge errors", "Tags", "People agree with the judge"],
        # 3 of 4; statsmodels' proportion_confint(3, 4, method="wilson") (0.3006, 0.9544)
        ["m1", "eth", "5", "62", "50%", "1", "Correct 2, Generic 1, Refusal 1",
         "75% (3/4), 95% CI 30%-95% (Wilson); few labeled cases (n = 4)"],
        ["model not named", "benchmark", "1", "–", "–", "1", "–", "–"]]
    assert message["text"] == "judgebot stats, last 7 days"


def test_empty_stats_give_a_notice():
    message = stats_message([], "C0GENERAL", days=30, model=None)
    assert sections(message) == ["No judgments in <#C0GENERAL> over the last 30 days."]
    scoped = stats_message([], "C0GENERAL", days=None, model="<!channel>")
    assert sections(scoped) == ["No judgments in <#C0GENERAL> for model *&lt;!channel&gt;* over the all time."]


def test_home_view_stays_within_the_block_limit(rubrics):
    eth = rubrics.get("eth")
    judgments = [scored(eth, ETH_CORRECT, id=i, message_ts=f"17123456{i:02d}.000100") for i in range(60)]
    view = home_view(rubrics, judgments, TEAM_URL).to_dict()
    assert view["type"] == "home"
    assert len(view["blocks"]) <= 100
    text = dumped(view)
    assert text.count("<#C0GENERAL>") == HOME_JUDGMENTS  # the newest, each naming its channel
    assert "<@U0ASKER>" not in text  # they are the person's own judgments
    assert text.count("|card>") == HOME_JUDGMENTS
    for rubric in rubrics:
        assert f"`{rubric.name}`" in text
    empty = home_view(rubrics, [], TEAM_URL).to_dict()
    assert "None yet" in dumped(empty)
    assert empty["type"] == "home"


def test_shown_keeps_as_much_as_fits_when_escaping_lengthens_the_text():
    from bot.slack.text import shown

    rendered, cut = shown("&" * 30, 100)
    assert cut and len(rendered) <= 100 and rendered.count("&amp;") >= 19
    assert shown("abc", 0) == ("", True)


def test_pieces_stay_within_the_limit_and_rejoin_to_the_text():
    from bot.slack.text import PDI, RLI, pieces, unescape

    text = "\n".join(["نعم & <b>"] * 900)
    parts = pieces(text, 500)
    assert all(len(part) <= 500 for part in parts) and len(parts) > 1
    assert unescape("".join(parts).replace(RLI, "").replace(PDI, "")) == text


def test_many_long_fields_are_cut_shorter_until_the_card_fits_and_keeps_the_three_texts(rubrics):
    academic = rubrics.get("academic")
    facts = [f"Fact {i}: " + "the programme rules say so in detail. " * 12 for i in range(12)]
    output = {**ACADEMIC, "reference_facts": facts, "key_aspects": facts,
              "evaluation": {"coverage": {"score": 3, "missing_aspects": facts},
                             "factuality": {"score": 3, "incorrect_facts": facts},
                             "clarity": {"score": 4, "issues": None}},
              "proposed_revision": "A long revision. " * 300}
    card = result_card(scored(academic, output, question="What are the credits?"), academic)
    message = message_of(card)
    assert len(json.dumps(message["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS
    shown_texts = sections(message)
    assert max(len(text) for text in shown_texts) < 2_000  # cut shorter than a section allows, so all fit
    assert any(text.startswith("*Question*\nWhat are the credits?") for text in shown_texts)
    labels = [label for label, _ in card.overflow]
    assert {"reference facts", "key aspects", "proposed revision", "evaluation › coverage › missing aspects",
            "evaluation › factuality › incorrect facts"} <= set(labels)
    assert "Everything the judge returned" not in labels  # nothing had to give way entirely
    assert len(labels) == len(set(labels))


def test_when_even_short_cuts_do_not_fit_fields_give_way_but_title_headline_texts_and_buttons_stay(rubrics):
    eth = rubrics.get("eth")
    output = {f"note_{i:02d}": "a remark of some length that is not short at all " * 6 for i in range(45)}
    card = result_card(scored(eth, ETH_CORRECT, output=output, derived={}), None, votes=(1, 0))
    message = message_of(card)
    assert len(message["blocks"]) <= MESSAGE_BLOCKS
    assert len(json.dumps(message["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS
    texts = sections(message)
    assert texts[0].startswith("✅ *Correct") and any(t.startswith("*Question*") for t in texts)
    assert set(buttons(message)) == {CORRECT, REJUDGE, DETAILS}
    assert "More than a message can hold" in dumped(message)
    [(label, text)] = card.overflow
    assert label == "Everything the judge returned" and json.loads(text) == output


def test_a_very_long_label_is_shortened_so_the_entry_keeps_its_question_and_link(rubrics):
    eth = rubrics.get("eth")
    long_label = replace(scored(eth, ETH_CORRECT, id=44, message_ts="1712345678.123456"),
                         label="Correct " + "very " * 700)  # 3,500 characters the judge wrote
    [_, entry] = sections(history_message([long_label], "C0GENERAL", TEAM_URL))
    assert len(entry) < 3_000 and "…" in entry
    assert "_How do I register for my exams?_" in entry and "|card>" in entry


def test_a_faithfulness_card_lists_each_claim_with_what_the_judge_found(rubrics):
    faithfulness = rubrics.get("faithfulness")
    output = {"result_tag": "Contradicted", "claims": [
        {"claim": "A free account syncs two devices.", "verdict": "supported", "passage": 1},
        {"claim": "Sync is instant <!channel> *now*.", "verdict": "not_in_context", "passage": None},
        {"claim": "It costs 5 euros.", "verdict": "contradicted", "passage": 2}]}
    message = message_of(result_card(scored(faithfulness, output, context='["Free accounts sync two devices."]'),
                                     faithfulness))
    assert block_problems(message["blocks"]) == []
    claims = section_named(message, "claims")
    assert claims == ("*claims*\n• A free account syncs two devices. · supported · passage 1\n"
                      "• Sync is instant &lt;!channel&gt; *now*. · not in context\n"
                      "• It costs 5 euros. · contradicted · passage 2")
    assert "❌ *Contradicted · 1 supported · 1 contradicted · 1 not in context*" in message["blocks"][1]["text"]["text"]


def test_a_card_of_a_reasoning_judge_says_how_many_of_its_tokens_were_reasoning(rubrics):
    eth = rubrics.get("eth")
    footer = dumped(message_of(result_card(scored(eth, ETH_CORRECT, tokens_out=720, tokens_reasoning=600), eth)))
    assert "1,620 tokens (600 reasoning)" in footer
    assert "reasoning)" not in dumped(message_of(result_card(scored(eth, ETH_CORRECT), eth)))
