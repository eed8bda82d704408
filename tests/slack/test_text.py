"""Text hygiene end to end: what comes in from Slack loses NULs and lone surrogates; what goes out cannot open a code
block or reverse the bot's own text."""

from __future__ import annotations

import json

from sqlmodel import select

from bot.slack.text import FSI, PDI
from bot.store import Store
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows
from tests.support.replies import eth_reply
from tests.support.slack_messages import card_of

FENCED = "How do I ```register"  # a fence it never closes
REVERSED = "campus-bot \u202eevil"  # a right-to-left override it never ends


async def test_a_form_with_nul_and_a_lone_surrogate_is_saved_without_them(slack, slack_server, judge_server,
                                                                         bot_settings):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command("eth")
    form = (await slack_server.await_for("views.open"))[0].params["view"]
    await slack.submit(form, rubric="eth", model="bot\x00-v2\ud800", question="Where\x00 do I\udfff register?",
                       reference="In myStudies.", answer="Use myStudies.")
    card = await card_of(slack_server)
    assert "Correct" in json.dumps(card["blocks"])
    with Store.open(bot_settings.db_url).session() as session:
        saved = session.exec(select(JudgmentTable)).one()
    assert (saved.question, saved.model_name) == ("Where do I register?", "bot-v2")


async def test_an_open_fence_and_override_stay_inside_their_own_text_in_history_home_and_digest(
        slack, slack_server, judge_server):
    judge_server.enqueue(eth_reply("Correct"))
    await slack.command("eth")
    form = (await slack_server.await_for("views.open"))[0].params["view"]
    await slack.submit(form, rubric="eth", model=REVERSED, question=FENCED, reference="In myStudies.",
                       answer="Use myStudies.")
    await card_of(slack_server)
    await slack.command("history")
    await slack.command("digest preview")
    await slack.event({"type": "app_home_opened", "user": "U0USER", "channel": "D0HOME", "tab": "home"})
    said = [c.params for c in await slack_server.await_for("response_url", count=2)]
    home = (await slack_server.await_for("views.publish"))[0].params["view"]
    for shown in (*said, home):
        text = json.dumps(shown, ensure_ascii=False)
        assert "```" not in text and "How do I `\u200b`\u200b`register" in text
        assert f"{FSI}{REVERSED}{PDI}" in text  # the override ends with the model's name


def test_every_paragraph_separator_starts_a_line_of_its_own_isolate() -> None:
    from bot.slack.text import FSI, PDI, escape

    for separator in ("\u2029", "\r", "\x1c", "\x1d", "\x1e", "\x85", "\n"):
        shown = escape(f"m{separator}\u202eX")
        # the override after the separator is closed inside an isolate of its own, before the bot's text goes on
        assert shown == f"m{separator}{FSI}\u202eX{PDI}", (separator, shown)
    assert escape("0/2 \u2029plain") == "0/2 \u2029plain"  # nothing to isolate: left as it is


def test_a_long_list_of_models_is_cut_between_rows_of_the_table_with_how_many_more(rubrics) -> None:
    import json

    from bot.records import RowState
    from bot.runs.summary import ModelFigures, Summary
    from bot.slack.views.file_run import summary_card
    from bot.slack.views.size_limits import MESSAGE_CHARS
    from bot.store import Run
    from tests.support.slack_messages import table_rows

    eth = rubrics.get("eth")
    run = Run(id=7, rubric_name="eth", rubric_version="1.0", rubric_hash=eth.content_hash, judge_model="j",
              source_name="answers.csv", total_rows=300)
    summary = Summary(criteria=["headline"])
    for n in range(300):
        summary.models[f"\u202emodel-{n:03d}-" + "x" * 40] = ModelFigures(rows=1)
    summary.counts[RowState.SCORED] = 300
    card = summary_card(run, eth, summary, "answers-results.csv")
    header, *rows = table_rows(card)
    assert header == ["Model under test", "Rows", "Mean /100", "Pass", "Judge errors"]
    assert 10 < len(rows) < 300
    # each name isolated in its cell, so its override reverses nothing after it
    assert all(row[0].startswith(FSI) and row[0].endswith(PDI) and "\u202emodel-" in row[0] for row in rows)
    notes = [block["elements"][0]["text"] for block in card["blocks"] if block["type"] == "context"]
    assert any(note.startswith(f"_{300 - len(rows)} more models not shown: the model column of answers-results.csv")
               for note in notes), notes
    assert len(json.dumps(card["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS


def test_a_summary_card_of_a_file_with_many_odd_label_columns_stays_within_slacks_limits(rubrics) -> None:
    import json

    from bot.runs.summary import Summary
    from bot.slack.views.file_run import summary_card
    from bot.store import Run
    from bot.trust.calibration import Confusion, calibrate
    from bot.trust.file_labels import FileLabels

    eth = rubrics.get("eth")
    run = Run(id=7, rubric_name="eth", rubric_version="1.0", rubric_hash=eth.content_hash, judge_model="j",
              source_name="answers.csv", total_rows=1)
    tags = [f"tag-{n:02d}-" + "w" * 20 for n in range(40)]
    figures = calibrate([]).model_copy(update={"n": 40, "pass_n": 40, "pass_agree": 20, "agreement": 0.5, "tag_n": 40,
                                               "confusion": Confusion.build([(tag, tag) for tag in tags], order=tags)})
    labels = FileLabels(columns=["human_pass"], calibration=figures, unknown=[f"human_x{n}" + "y" * 5_000
                                                                              for n in range(40)],
                        problems=[(n, "human_pass 'maybe' is not true or false") for n in range(20)], unreadable=35)
    card = summary_card(run, eth, Summary(criteria=["headline"]), "answers-results.csv", labels)
    for block in card["blocks"]:
        text = json.dumps(block)
        assert len(text) < 3_500, block["type"]
        if block["type"] == "section" and "text" in block:
            assert block["text"]["text"].count("```") % 2 == 0  # a code block is never left open
        if block["type"] == "context":
            assert len(block["elements"]) <= 10 and all(len(e["text"]) <= 3_000 for e in block["elements"])
    notes = json.dumps([b for b in card["blocks"] if b["type"] == "context"])
    assert "and 37 more columns that name no field" in notes and "and 32 more rows whose label was not read" in notes
