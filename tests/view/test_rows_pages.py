"""A run's rows filtered, searched, sorted and paged; one row whole; untrusted text shown as text; another channel's
run or row is not found."""

from __future__ import annotations

import re

from bot.csvfiles.rows import CsvRow
from bot.runs import Origin, start_run
from bot.store import Store, iter_judgments, save_verdict
from bot.view import Viewer
from tests.support.history_rows import Row, add, verdict

SCRIPT = "<script>alert('pwned')</script>"


def shown_rows(text: str) -> list[str]:
    """The row numbers a run's page lists."""
    return re.findall(r'<td><a href="/rows/\d+">(\d+)</a></td>', text)


async def test_filters_narrow_a_runs_rows_in_the_database(open_view, history: Store, rubrics) -> None:
    rubric = rubrics.get("academic")
    ids = add(history, rubric, [Row("bot-a", "scored", 80, True, "ok"), Row("bot-a", "scored", 20, False, "wrong"),
                                Row("bot-b", "scored", 90, True, "ok"), Row("bot-b", "error"),
                                Row("bot-b", "scored", 10, False, "wrong")], channel="C1", user="U1")
    run_id = next(iter_judgments(history, 1)).run_id
    browser = await open_view()
    everything = await browser.get(f"/runs/{run_id}")
    assert everything.status == 200 and shown_rows(everything.text) == ["2", "3", "4", "5", "6"]
    assert shown_rows((await browser.get(f"/runs/{run_id}", model="bot-b")).text) == ["4", "5", "6"]
    failing_b = await browser.get(f"/runs/{run_id}", model="bot-b", outcome="fail")
    assert shown_rows(failing_b.text) == ["6"]  # the failing rows of one model: the error is not a fail
    # each model's scored rows, pass rate and a link to its failing rows, on the run's page
    assert re.findall(r'<tr><td class="text">(bot-[ab])</td><td class="n">(\d+)</td><td class="n">(\d+)%</td>',
                      everything.text) == [("bot-a", "2", "50"), ("bot-b", "2", "50")]
    assert f'href="/runs/{run_id}?model=bot-b&amp;outcome=fail">1 failing rows</a>' in everything.text
    assert shown_rows((await browser.get(f"/runs/{run_id}", status="error")).text) == ["5"]
    assert shown_rows((await browser.get(f"/runs/{run_id}", tag="wrong")).text) == ["3", "6"]
    lowest = await browser.get(f"/runs/{run_id}", sort="headline")
    assert shown_rows(lowest.text) == ["6", "3", "2", "4", "5"]  # no headline last
    assert shown_rows((await browser.get(f"/runs/{run_id}", q="row 4")).text) == ["4"]
    assert shown_rows((await browser.get(f"/runs/{run_id}", q="%")).text) == []  # a wildcard is taken literally
    row = await browser.get(f"/rows/{ids[1]}")
    assert row.status == 200 and "Q C1 U1 row 3" in row.text and "R C1 U1 row 3" in row.text


async def test_a_run_or_row_of_a_channel_the_viewer_cannot_see_is_not_found(open_view, history: Store, rubrics) -> None:
    rubric = rubrics.get("academic")
    mine = add(history, rubric, [Row("bot-a", "scored", 80, True)], channel="C1", user="U1")
    theirs = add(history, rubric, [Row("bot-a", "scored", 80, True)], channel="C2", user="U2")
    runs = {channel: next(j.run_id for j in iter_judgments(history, run)) for channel, run in (("C1", 1), ("C2", 2))}
    browser = await open_view(Viewer(user_id="U1", channels=frozenset({"C1"})))
    assert (await browser.get(f"/runs/{runs['C1']}")).status == 200
    assert (await browser.get(f"/rows/{mine[0]}")).status == 200
    assert (await browser.get(f"/runs/{runs['C2']}")).status == 404
    hidden = await browser.get(f"/rows/{theirs[0]}")
    assert hidden.status == 404 and "C2" not in hidden.text


async def test_untrusted_text_is_shown_as_text(open_view, history: Store, rubrics) -> None:
    rubric = rubrics.get("academic")
    origin = Origin(source="cli", team_id=None, channel_id=None, user_id=None)
    run = start_run(history, rubric=rubric, rows=[CsvRow(line=2, question=f"Q {SCRIPT}", reference=SCRIPT,
                                                         answer=f"A {SCRIPT}", model=SCRIPT, cells={})],
                    judge_model=SCRIPT, columns=["question", "reference", "answer", "model"], origin=origin,
                    source_name=f"{SCRIPT}.csv")
    judgment = next(iter_judgments(history, run.id))
    assert save_verdict(history, judgment.id, verdict(rubric, Row(SCRIPT, "scored", 50, True, SCRIPT)), cache_key="k")
    browser = await open_view()
    for path in ("/runs", f"/runs/{run.id}", f"/rows/{judgment.id}"):
        page = await browser.get(path)
        assert page.status == 200
        assert "<script" not in page.text.lower()
        assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in page.text
