"""Labeling in the browser: the next case of a queue taken, blind where the channel reviews blind, a label posted only
with the session's CSRF token, saved as the label Slack and the terminal save, and counted by calibration."""

from __future__ import annotations

import re
from pathlib import Path

from bot.records import Verdict
from bot.rubric import RubricSet
from bot.store import Store, add_rows, create_run, iter_judgments, save_verdict, set_blind
from bot.trust.review import send_to_review
from bot.view import Viewer
from tests.support.cli import history as sql
from tests.support.cli import judgebot_json
from tests.view.conftest import csrf_of


def queued(store: Store, rubrics: RubricSet, *, channel: str | None, rows: int, blind: bool = False) -> list[int]:
    """`rows` unsure verdicts of eth in `channel` (None: the terminal), each sent to its review queue; their ids."""
    eth = rubrics.get("eth")
    common = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
              "judge_model": "judge-m", "channel_id": channel, "team_id": "T0TEAM" if channel else None}
    run = create_run(store, **common)
    add_rows(store, [{**common, "run_id": run.id, "row_number": n, "status": "pending", "question": f"Where {n}?",
                      "reference": "Use myStudies.", "answer": f"On the <b>portal</b> {n}."} for n in range(1, rows + 1)])
    output = {"correctness": 0, "completeness": 0, "result_tag": "Hallucination", "reasoning": "r"}
    verdict = Verdict(status="scored", output=output, headline=0.0, passed=False, label="Hallucination · secret",
                      tag="Hallucination", raw_reply="{}", prompt_hash="p" * 32, unsure=True, samples=3,
                      **{key: common[key] for key in ("rubric_name", "rubric_version", "rubric_hash", "judge_model")})
    ids = []
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")
        ids.append(row.id)
    send_to_review(store, run, rate=0)
    if blind:
        set_blind(store, team_id="T0TEAM", channel_id=channel, blind=True, user_id="U0ADMIN")
    return ids


async def take(browser, channel: str) -> tuple[str, str]:
    """The next case of the channel's queue taken: (its address, its page)."""
    queue = await browser.get("/review", channel=channel)
    async with browser.http.post(browser.base + "/review/next", data={"channel": channel, "csrf_token": csrf_of(queue)},
                                 allow_redirects=False) as response:
        assert response.status == 303, await response.text()
        where = response.headers["Location"]
    page = await browser.get(where)
    assert page.status == 200
    return where, page.text


async def test_three_labels_given_in_the_browser_are_the_terminals_labels_and_count_in_calibration(
        open_view, history: Store, rubrics: RubricSet, tmp_path: Path) -> None:
    queued(history, rubrics, channel=None, rows=3)
    browser = await open_view(Viewer(user_id="ada"))
    for passed, tag, note in (("pass", "Correct", "right <script>x</script>"), ("fail", "Refusal", ""), ("fail", "", "")):
        where, page = await take(browser, "terminal")
        assert "The judge said" in page and "secret" in page  # the terminal's queue is never blind
        async with browser.http.post(browser.base + where + "/label", data={
                "passed": passed, "tag": tag, "note": note, "csrf_token": csrf_of(await browser.get(where))},
                allow_redirects=False) as response:
            assert response.status == 303 and re.fullmatch(r"/rows/\d+\?saved=1", response.headers["Location"])
    labels = sql(tmp_path, "SELECT user_id, source, passed, tag, note FROM label ORDER BY id")
    assert labels == [("ada", "correction", 1, "Correct", "right <script>x</script>"),
                      ("ada", "correction", 0, "Refusal", None), ("ada", "correction", 0, None, None)]
    assert sql(tmp_path, "SELECT state, labeled_by FROM review_case") == [("labeled", "ada")] * 3
    assert "No case of this queue waits for your label" in (await take_none(browser))

    page = (await browser.get("/calibration", rubric="eth", channel="all")).text
    code, found, stderr = judgebot_json(tmp_path, "calibration", "--rubric", "eth")
    assert code == 0, stderr
    assert found["labels"] == 3
    assert f'<b id="labels">{found["labels"]}</b>' in page
    pass_fail = found["figures"]["pass_fail"]
    assert f'<b id="agreement">{round(pass_fail["agreement"] * 100)}%</b>' in page
    kappa = pass_fail["kappa"]["value"]
    assert f'<b id="kappa">{"n/a" if kappa is None else f"{kappa:.2f}"}</b>' in page


async def take_none(browser) -> str:
    queue = await browser.get("/review", channel="terminal")
    async with browser.http.post(browser.base + "/review/next", data={"channel": "terminal",
                                                                       "csrf_token": csrf_of(queue)}) as response:
        return await response.text()


async def test_a_label_without_the_sessions_csrf_token_is_refused(open_view, history: Store, rubrics: RubricSet,
                                                                  tmp_path: Path) -> None:
    queued(history, rubrics, channel=None, rows=1)
    browser = await open_view(Viewer(user_id="ada"))
    where, page = await take(browser, "terminal")
    for token in (None, "forged", csrf_of(await (await open_view(Viewer(user_id="ada"))).get("/review"))):
        data = {"passed": "pass"} | ({"csrf_token": token} if token else {})
        refused = await browser.post(where + "/label", data)
        assert refused.status == 403, token  # none, a made-up one, another session's
    assert sql(tmp_path, "SELECT COUNT(*) FROM label") == [(0,)]
    saved = await browser.post(where + "/label", {"passed": "pass", "csrf_token": csrf_of(await browser.get(where))})
    assert saved.status == 200 and "Your label is saved" in saved.text
    assert sql(tmp_path, "SELECT COUNT(*) FROM label") == [(1,)]


async def test_a_blind_channels_case_hides_the_verdict_until_the_label_is_saved(
        open_view, history: Store, rubrics: RubricSet, tmp_path: Path) -> None:
    queued(history, rubrics, channel="C0BLIND", rows=1, blind=True)
    browser = await open_view(Viewer(user_id="U0CY", team_id="T0TEAM", channels=frozenset({"C0BLIND"})))
    queue = await browser.get("/review", channel="C0BLIND")
    assert "secret" not in queue.text and "reviews blind" in queue.text
    where, page = await take(browser, "C0BLIND")
    assert "secret" not in page and "reviews blind" in page, page[page.find("secret") - 300:page.find("secret") + 50]
    assert "On the &lt;b&gt;portal&lt;/b&gt; 1." in page
    saved = await browser.post(where + "/label", {"passed": "fail", "tag": "Hallucination", "note": "wrong portal",
                                                  "csrf_token": csrf_of(await browser.get(where))})
    assert saved.status == 200 and "secret" in saved.text  # the verdict once the label is saved
    assert sql(tmp_path, "SELECT channel_id, user_id, passed, tag, note FROM label") == [
        ("C0BLIND", "U0CY", 0, "Hallucination", "wrong portal")]
    other = await open_view(Viewer(user_id="U0BO", channels=frozenset({"C0OTHER"})))
    assert (await other.get(where)).status == 404  # another channel's person
    assert (await other.get("/review", channel="C0BLIND")).status == 404
