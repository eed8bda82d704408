"""Slack's table blocks in the bot's messages (a file run's summary, `/judge stats`, `/judge calibration`, `/judge
budget`, the digest): valid, cut to Slack's limits with a line saying what was left out, and untrusted names shown
literally in their cells, never as a mention, a link or formatting."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.digest import Digest, Line, Period
from bot.records import RowState
from bot.runs.summary import ModelFigures, Summary
from bot.slack.views.blocks import message, size
from bot.slack.views.budget import budget_message
from bot.slack.views.calibration import calibration_message
from bot.slack.views.commands import stats_message
from bot.slack.views.digest import digest_message
from bot.slack.views.file_run import summary_card
from bot.slack.views.size_limits import MESSAGE_CHARS
from bot.slack.views.table_block import Column, table, text, untrusted
from bot.store import CostLimits, Figures, Run, Spend
from bot.trust.calibration import Confusion, Gap, calibrate
from bot.trust.report import RubricTrust
from tests.support.history_rows import Row, add
from tests.support.slack_messages import table_dicts, table_of, table_rows
from tests.support.slack_server.block_checks import block_problems

HOSTILE = "<!channel> *bold* <https://evil|x>"


def postable(posted: dict[str, Any]) -> dict[str, Any]:
    """`posted` as Slack takes it: fallback text, blocks that pass Slack's checks, one valid table, and the message's
    size limit."""
    assert posted["text"]
    assert block_problems(posted["blocks"]) == []
    assert table_of(posted) is not None
    assert len(json.dumps(posted["blocks"], ensure_ascii=False)) <= MESSAGE_CHARS
    return posted


def notes(posted: dict[str, Any]) -> list[str]:
    """The text of every context line of a message."""
    return [element["text"] for block in posted["blocks"] if block["type"] == "context"
            for element in block["elements"]]


def literal(posted: dict[str, Any], name: str) -> None:
    """`name` is shown as it is in cells of the table (a text element, no style): never a mention, link or bold."""
    cells = [cell for row in table_of(posted)["rows"][1:] for cell in row]
    shown = [cell for cell in cells if cell["type"] == "rich_text"
             and cell["elements"][0]["elements"][0]["text"] == name]
    assert shown and all(cell["elements"] == [{"type": "rich_text_section", "elements": [{"type": "text",
                                                                                        "text": name}]}]
                         for cell in shown)
    assert '"broadcast"' not in json.dumps(posted) and '"type": "link"' not in json.dumps(posted)


# -- the helper ----------------------------------------------------------------------------------------------------


def test_a_table_keeps_a_hundred_rows_with_its_header_and_says_how_many_more() -> None:
    rows = [[text(str(n)), untrusted(f"m{n}")] for n in range(250)]
    found = table([Column("n", right=True), Column("name")], rows, room=10**6)
    posted = message(found.blocks(rows="_{n} more rows not shown_"), "t")
    shown = table_rows(posted)
    assert len(shown) == 100 and shown[0] == ["n", "name"] and shown[1] == ["0", "m0"] and shown[-1] == ["98", "m98"]
    assert notes(posted) == ["_151 more rows not shown_"]
    assert table_of(posted)["column_settings"] == [{"align": "right"}, {"align": "left"}]
    # a closing row (of totals) is always kept: the rows before it give way
    closed = table([Column("n")], rows, room=10**6, last=[text("total")])
    shown = table_rows(message(closed.blocks(rows="_{n} more_"), "t"))
    assert len(shown) == 100 and shown[-1] == ["total"] and closed.rows_left == 250 - 98


def test_a_table_keeps_twenty_columns_and_says_how_many_more() -> None:
    columns = [Column(f"c{n}") for n in range(26)]
    found = table(columns, [[text(str(n)) for n in range(26)]] * 3, room=10**6)
    posted = message(found.blocks(rows="_{n} more rows_", columns="_{n} more columns not shown_"), "t")
    header, *rows = table_rows(posted)
    assert header == [f"c{n}" for n in range(20)] and rows == [[str(n) for n in range(20)]] * 3
    assert notes(posted) == ["_6 more columns not shown_"]


def test_a_table_fits_the_room_the_message_leaves_and_the_text_slack_takes() -> None:
    rows = [[untrusted("x" * 400), text(str(n))] for n in range(99)]
    found = table([Column("name"), Column("n")], rows, room=3_000)
    assert found.block is not None and size([found.block]) <= 3_000 and found.rows_left > 90
    roomy = table([Column("name"), Column("n")], rows, room=10**6)
    assert roomy.block is not None
    assert sum(len(cell) for row in table_rows(message([roomy.block], "t")) for cell in row) <= 10_000
    assert table([Column("name")], rows, room=10).block is None  # not even the header fits: no table, all left out
    assert table([Column("name")], rows, room=10).rows_left == 99


def test_an_untrusted_cell_is_one_literal_line_without_what_slack_refuses() -> None:
    cell = untrusted("<!channel>\n*bold*\x00 \u202eevil")
    [[element]] = [section["elements"] for section in cell["elements"]]
    assert element == {"type": "text", "text": "\u2068<!channel> *bold* \u202eevil\u2069"}  # isolated: it has an override
    assert untrusted("")["elements"][0]["elements"][0]["text"] == "–"  # Slack takes no empty cell
    assert untrusted("y" * 900, 80)["elements"][0]["elements"][0]["text"] == "y" * 79 + "…"


# -- the five views ------------------------------------------------------------------------------------------------


def test_stats_show_a_hostile_model_literally_and_cut_many_pairs_with_a_line() -> None:
    figures = [Figures(HOSTILE, "eth", cases=3, scored=3, mean_headline=50.0, passed=1,
                       tags={"<@U0BOSS>": 2, "Correct": 1})]
    figures += [Figures(f"campus-bot-{n:03d}", "eth", cases=2, scored=2, mean_headline=40.0, passed=1)
                for n in range(150)]
    posted = postable(stats_message(figures, "C0GENERAL", days=30, model=None))
    literal(posted, HOSTILE)
    literal(posted, "<@U0BOSS> 2, Correct 1")
    shown = len(table_dicts(posted))
    assert 10 < shown < 151
    assert notes(posted) == [f"_{151 - shown} more model and rubric pair(s) not shown: name a model to narrow it "
                             "down, or `judgebot stats --channel C0GENERAL` in a terminal lists them all._"]


def test_a_file_runs_summary_shows_its_models_in_a_table(rubrics) -> None:
    eth = rubrics.get("eth")
    run = Run(id=3, rubric_name="eth", rubric_version="1.0", rubric_hash=eth.content_hash, judge_model="j",
              source_name="answers.csv", total_rows=2)
    summary = Summary(criteria=["headline"])
    summary.models = {HOSTILE: ModelFigures(rows=2, scored=2, passed=1, headline_total=150.0, errors=1),
                      "bot-b": ModelFigures(rows=1, scored=1, passed=1, headline_total=100.0)}
    summary.counts[RowState.SCORED] = 3
    posted = postable(summary_card(run, eth, summary, "answers-results.csv"))
    assert table_rows(posted) == [["Model under test", "Rows", "Mean /100", "Pass", "Judge errors"],
                                  ["bot-b", "1", "100.0", "100%", "0"], [HOSTILE, "2", "75.0", "50%", "1"]]
    literal(posted, HOSTILE)
    assert "*Per model under test*" in json.dumps(posted["blocks"])


def test_a_file_runs_summary_cuts_many_models_with_a_line_naming_its_results_file_as_it_is(rubrics) -> None:
    eth = rubrics.get("eth")
    run = Run(id=4, rubric_name="eth", rubric_version="1.0", rubric_hash=eth.content_hash, judge_model="j",
              source_name="{n} <!here>.csv", total_rows=300)
    summary = Summary(criteria=["headline"])
    summary.models = {f"model-{n:03d}": ModelFigures(rows=1, scored=1, headline_total=50.0) for n in range(300)}
    summary.counts[RowState.SCORED] = 300
    posted = postable(summary_card(run, eth, summary, "{n} <!here>-results.csv"))
    shown = len(table_dicts(posted))
    assert 10 < shown < 300
    assert f"_{300 - shown} more models not shown: the model column of {{n}} &lt;!here&gt;-results.csv has every " \
           "row, and `judgebot stats` in a terminal sums them up_" in notes(posted)


def calibration(confusion: Confusion | None, gaps: dict[str, Gap]) -> RubricTrust:
    figures = calibrate([]).model_copy(update={"n": 4, "pass_n": 4, "pass_agree": 3, "agreement": 0.75,
                                               "confusion": confusion, "gaps": gaps})
    return RubricTrust(rubric_name="eth", figures=figures, now=None, doubts=[])


def test_calibration_cuts_a_wide_confusion_matrix_to_twenty_cells_and_says_which_tags_are_left_out(rubrics) -> None:
    tags = [HOSTILE, *(f"tag-{n:02d}" for n in range(24))]
    confusion = Confusion.build([(tag, tag) for tag in tags], order=tags)
    posted = postable(calibration_message([calibration(confusion, {})], rubrics, "C0GENERAL", days=None))
    header, *rows = table_rows(posted)
    assert header == ["judge \\ people", HOSTILE, *(f"tag-{n:02d}" for n in range(17)), "total"]  # 20 cells
    # the judge's tags as rows, as many as the message holds, then the totals
    kept = [row[0] for row in rows]
    assert 5 < len(kept) < 25 and kept == [*tags[:len(kept) - 1], "total"]
    assert rows[0][1] == "1" and rows[0][-1] == "1" and rows[-1][-1] == "25"
    literal(posted, HOSTILE)
    where = "`judgebot calibration --rubric eth --channel C0GENERAL` shows them all"
    assert notes(posted) == [f"_{26 - len(kept)} more of the judge's tags (rows) not shown: {where}_ · "
                             f"_7 more of people's tags (columns) not shown: {where}_"]


def test_calibration_of_a_rubric_without_a_tag_shows_its_criteria_in_a_table(rubrics) -> None:
    gaps = {HOSTILE: Gap(n=4, mean_abs=0.5, mean_signed=0.25), "completeness": Gap(n=4, mean_abs=0.0, mean_signed=0.0)}
    posted = postable(calibration_message([calibration(None, gaps)], rubrics, "C0GENERAL", days=30))
    assert table_rows(posted) == [
        ["Criterion", "Labels", "Judge − people", "Mean absolute difference", "Weighted kappa"],
        [HOSTILE, "4", "+0.25", "0.50", "–"], ["completeness", "4", "+0.00", "0.00", "–"]]
    literal(posted, HOSTILE)
    sections = [block["text"]["text"] for block in posted["blocks"] if block["type"] == "section"]
    assert "*Scores, the judge against people*" in sections  # the table's heading, and the gaps said once only
    assert not any("mean absolute difference" in text for text in sections)


def test_calibration_of_two_rubrics_gives_the_first_the_table_and_the_second_its_text(rubrics) -> None:
    confusion = Confusion.build([("Correct", "Correct"), ("Correct", "Generic")], order=["Correct", "Generic"])
    second = calibration(confusion, {"correctness": Gap(n=2, mean_abs=1.0, mean_signed=-1.0)})
    second.rubric_name = "academic"
    posted = postable(calibration_message([calibration(confusion, {}), second], rubrics, "C0GENERAL", days=None))
    assert table_rows(posted)[0] == ["judge \\ people", "Correct", "Generic", "total"]
    text = json.dumps(posted["blocks"], ensure_ascii=False)
    assert text.count("```") == 2 and "`correctness`: the judge scores 1.00 lower" in text  # the second as today


def test_the_budget_lists_the_spend_per_rubric_and_judge_in_a_table() -> None:
    spend = Spend(by_judge=[(HOSTILE, "gpt-4o", 2.5, 0), ("eth", HOSTILE, 1.0, 3)]
                  + [(f"rubric-{n:03d}", "gpt-4o-mini", 0.01, 0) for n in range(130)])
    posted = postable(budget_message("C0GENERAL", "May 2026", spend, CostLimits(monthly_budget=10.0), 1.0,
                                     checks=0.5))
    rows = table_dicts(posted)
    assert rows[:2] == [{"Rubric": HOSTILE, "Judge": "gpt-4o", "Spent": "$2.50", "Judgments of unknown price": "0"},
                        {"Rubric": "eth", "Judge": HOSTILE, "Spent": "$1.00", "Judgments of unknown price": "3"}]
    literal(posted, HOSTILE)
    [head] = [block["text"]["text"] for block in posted["blocks"] if block["type"] == "section"]
    assert head.startswith("*Spent in <#C0GENERAL> in May 2026 (UTC)*: $4.80.\nMonthly budget $10.00: 48% used.")
    assert "pairwise runs asked for here: $0.5000 more this month." in head
    assert notes(posted) == [f"_{132 - len(rows)} more rubric and judge pair(s) not shown._"]


def test_the_digest_shows_a_hostile_model_literally_in_its_table(rubrics) -> None:
    week = Period.ending(datetime(2026, 11, 23, tzinfo=ZoneInfo("Europe/Berlin")))
    lines = [Line(Figures(HOSTILE, "eth", cases=4, scored=4, mean_headline=75.0, passed=3,
                          tags={"Correct": 3, "Generic": 1}), None)]
    posted = postable(digest_message(Digest("C0GENERAL", week, lines), rubrics, None))
    [row] = table_dicts(posted)
    assert (row["Model"], row["▲▼ mean"], row["Tags"]) == (
        HOSTILE, "new this week", "correct 75% · generic 25% · refusal 0% · hallucination 0%")
    literal(posted, HOSTILE)


# -- through the bot -----------------------------------------------------------------------------------------------


async def test_judge_stats_posts_a_valid_table_with_a_hostile_model_and_a_line_for_those_cut(
        slack, slack_server, http_bot, rubrics) -> None:
    eth = rubrics.get("eth")
    rows = [Row(HOSTILE, "scored", 90.0, True, "Correct")]
    rows += [Row(f"campus-bot-{n:03d}-with-a-longish-name", "scored", 50.0, False, "Generic") for n in range(120)]
    add(http_bot.context.store, eth, rows, channel="C0GENERAL", user="U0USER", team="T0TEST")
    await slack.command("stats")
    [call] = await slack_server.await_for("response_url")
    posted = postable(call.params)
    literal(posted, HOSTILE)
    assert table_dicts(posted)[0]["Model"] in (HOSTILE, "campus-bot-000-with-a-longish-name")
    shown = len(table_dicts(posted))
    assert notes(posted) == [f"_{121 - shown} more model and rubric pair(s) not shown: name a model to narrow it "
                             "down, or `judgebot stats --channel C0GENERAL` in a terminal lists them all._"]
    assert call.params["text"] == "judgebot stats, last 30 days"
