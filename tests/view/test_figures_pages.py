"""The comparison and the weekly trend: the figures of `judgebot compare` from the same functions, each regression
linking to its rows; the trend drawn as SVG from the counted weeks; and `judgebot view` kept on loopback."""

from __future__ import annotations

import re
from pathlib import Path

from bot.store import Store, iter_judgments
from bot.view import Viewer
from tests.support.cli import flat, judgebot, judgebot_json
from tests.support.history_rows import Row, add


async def test_two_models_compared_as_judgebot_compare_compares_them(open_view, history: Store, rubrics,
                                                                       tmp_path: Path) -> None:
    rubric = rubrics.get("academic")
    # the same three questions (row numbers 2-4) answered by two models in two runs of one channel
    a = add(history, rubric, [Row("bot-a", "scored", h, h >= 50) for h in (80, 60, 40)], channel="C1", user="U")
    b = add(history, rubric, [Row("bot-b", "scored", h, h >= 50) for h in (20, 70, 40)], channel="C1", user="U")
    browser = await open_view()
    async with browser.http.get(browser.base + "/compare", params=[("model", "bot-a"), ("model", "bot-b"),
                                                                   ("channel", "C1")]) as response:
        text = await response.text()
        assert response.status == 200, text
    code, found, stderr = judgebot_json(tmp_path, "compare", "--model", "bot-a", "--model", "bot-b", "--channel", "C1")
    assert code == 0, stderr
    assert "bot-b against bot-a" in text
    # the biggest regression, question of row 2 (80 -> 20), links to both of its rows
    assert re.search(rf'href="/rows/{a[0]}">80\.0.*?href="/rows/{b[0]}">20\.0', text, re.S)
    figures = found["rubrics"][0]
    assert figures["paired_questions"] == 3 and f'<b>{figures["paired_questions"]}</b>' in text
    assert f'<b>{figures["difference"]["mean"]:+.1f}</b>' in text  # the paired difference, as the terminal's


async def test_a_viewer_limited_to_a_channel_cannot_compare_another_channels_runs(open_view, history: Store,
                                                                                  rubrics) -> None:
    rubric = rubrics.get("academic")
    add(history, rubric, [Row("bot-a", "scored", 80, True)], channel="C1", user="U")
    add(history, rubric, [Row("bot-b", "scored", 80, True)], channel="C2", user="U")
    first, second = (next(iter_judgments(history, run)).run_id for run in (1, 2))
    browser = await open_view(Viewer(user_id="U", channels=frozenset({"C1"})))
    assert (await browser.get("/compare", a=str(first), b=str(second))).status == 404
    assert (await browser.get("/trend", channel="C2")).status == 404
    assert (await browser.get("/calibration", rubric="academic", channel="all")).status == 404


async def test_the_weekly_trend_is_drawn_from_the_counted_weeks(open_view, history: Store, rubrics) -> None:
    rubric = rubrics.get("academic")
    add(history, rubric, [Row("bot-a", "scored", 80, True, days_ago=0), Row("bot-a", "scored", 40, False, days_ago=0),
                          Row("bot-a", "scored", 90, True, days_ago=14)], channel="C1", user="U")
    page = await (await open_view()).get("/trend", channel="C1", weeks="4")
    assert page.status == 200
    assert page.text.count("<svg") == 1 and "<polyline" in page.text and "bot-a" in page.text
    assert "50%" in page.text and "60.0" in page.text  # this week: 1 of 2 passed, mean headline 60


def test_judgebot_view_refuses_an_address_other_machines_reach(tmp_path: Path) -> None:
    code, out = judgebot(tmp_path, "view", "--host", "0.0.0.0")
    assert code != 0
    assert "without Sign in with Slack configured, judgebot view serves only this machine" in flat(out)
