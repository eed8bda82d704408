"""The list of runs: each run's figures, only the channels the viewer may see, the policy headers on every answer."""

from __future__ import annotations

from bot.store import Store
from bot.view import Viewer
from tests.support.history_rows import Row, add


async def test_the_runs_page_lists_each_run_with_its_pass_rate_and_only_the_viewers_channels(
        open_view, history: Store, rubrics) -> None:
    rubric = rubrics.get("academic")
    add(history, rubric, [Row("bot-a", "scored", 80, True), Row("bot-a", "scored", 20, False),
                          Row("bot-b", "scored", 90, True), Row("bot-b", "error")], channel="C1", user="U1")
    add(history, rubric, [Row("bot-c", "scored", 70, True)], channel="C2", user="U2")

    everyone = await (await open_view()).get("/runs")
    assert everyone.status == 200
    assert "2 runs" in everyone.text and "bot-a, bot-b" in everyone.text and "bot-c" in everyone.text
    assert "67%" in everyone.text  # 2 of the 3 scored rows of the first run passed

    one_channel = await (await open_view(Viewer(user_id="U2", channels=frozenset({"C2"})))).get("/runs")
    assert "1 runs" in one_channel.text or "1 run" in one_channel.text
    assert "bot-c" in one_channel.text and "bot-a" not in one_channel.text


async def test_every_answer_carries_the_policy_headers_and_other_methods_are_refused(open_view) -> None:
    browser = await open_view()
    for path in ("/runs", "/static/view.css", "/no-such-page"):
        page = await browser.get(path)
        assert page.headers["Content-Security-Policy"].startswith("default-src 'none'; style-src 'self'")
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert page.headers["Referrer-Policy"] == "no-referrer"
    async with browser.http.put(browser.base + "/runs") as response:
        assert response.status == 405
    async with browser.http.post(browser.base + "/runs", data={}) as response:
        assert response.status == 405
    async with browser.http.get(browser.base + "/runs", headers={"Host": "attacker.example"}) as response:
        assert response.status == 421  # a page of another site whose name points here reads nothing
