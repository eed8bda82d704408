"""The view in a real browser (headless Chromium through Selenium): a run opened from the runs page, the failing rows
of one model found with two selections, three cases labeled and counted by calibration as `judgebot calibration`
counts them, and an answer holding a script shown as text with no script run."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.rubric import RubricSet
from bot.store import Store
from tests.support.cli import judgebot_json
from tests.support.view_browser import INJECTED, Demo, arrive, browser_missing, chromium, demo_history, served_view

REQUIRED = os.environ.get("JUDGEBOT_REQUIRE_BROWSER") == "1"  # .ci/run sets it: there the tests fail, never skip
# A browser's start and its pages take seconds a test: with the slow tests (`pytest -m slow`, which CI runs).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, rubrics: RubricSet) -> Iterator[tuple[str, Demo, Path]]:
    """The view served over the demo history: (its address, what the history holds, the history's folder)."""
    folder = tmp_path_factory.mktemp("browser")
    url = f"sqlite:///{folder / 'h.db'}"
    store = Store.open(url)
    demo = demo_history(store, rubrics)
    with served_view(Settings(_env_file=None, database_url=url), store, rubrics) as base:
        yield base, demo, folder
    store.engine.dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    missing = browser_missing()
    if missing:
        if REQUIRED:
            pytest.fail(missing)
        pytest.skip(missing)
    driver = chromium()
    driver.set_page_load_timeout(15)
    yield driver
    driver.quit()


def by_css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, selector)


def all_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def choose(driver: Any, selector: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select
    Select(by_css(driver, selector)).select_by_value(value)


def test_a_run_opened_from_the_runs_page_shows_the_failing_rows_of_one_model_after_two_selections(
        site: tuple[str, Demo, Path], browser: Any) -> None:
    base, demo, _ = site
    browser.get(base + "/")
    assert browser.current_url == base + "/runs"
    assert len(all_css(browser, "table.list tbody tr")) == 5
    by_css(browser, f'table.list a[href="/runs/{demo.run_id}"]').click()
    assert arrive(browser, f"/runs/{demo.run_id}") == f"{base}/runs/{demo.run_id}"
    assert "25 rows match" in by_css(browser, "p.said").text

    choose(browser, 'form.filters select[name="model"]', "gpt-b")
    choose(browser, 'form.filters select[name="outcome"]', "fail")
    by_css(browser, 'form.filters button[type="submit"]').click()

    assert "model=gpt-b" in arrive(browser, "outcome=fail")
    assert f"{demo.failing_b} rows match" in by_css(browser, "p.said").text
    rows = [[cell.text for cell in row.find_elements("css selector", "td")]
            for row in all_css(browser, "table.rows tbody tr")]
    assert len(rows) == demo.failing_b
    assert all(row[1] == "gpt-b" and row[4].startswith("fail") and row[5] == "Hallucination" for row in rows), rows
    by_css(browser, "table.rows tbody tr a").click()
    assert "/rows/" in arrive(browser, "/rows/") and "gpt-b" in by_css(browser, "main").text


def test_the_failing_rows_of_one_model_are_two_clicks_from_the_runs_page(site: tuple[str, Demo, Path],
                                                                        browser: Any) -> None:
    base, demo, _ = site
    browser.get(base + "/runs")
    by_css(browser, f'table.list a[href="/runs/{demo.run_id}"]').click()  # one: the run
    arrive(browser, f"/runs/{demo.run_id}")
    by_css(browser, 'table.models a[href*="model=gpt-b"]').click()  # two: that model's failing rows
    assert "outcome=fail" in arrive(browser, "outcome=fail")
    rows = [[cell.text for cell in row.find_elements("css selector", "td")]
            for row in all_css(browser, "table.rows tbody tr")]
    assert len(rows) == demo.failing_b and all(row[1] == "gpt-b" and row[4].startswith("fail") for row in rows), rows


def test_an_answer_holding_a_script_shows_as_text_and_the_policy_blocks_inline_scripts(
        site: tuple[str, Demo, Path], browser: Any) -> None:
    base, demo, _ = site
    browser.get(f"{base}/runs/{demo.queued_run_id}?q=portal+1.")
    by_css(browser, "table.rows tbody tr a").click()
    arrive(browser, "/rows/")
    assert INJECTED in by_css(browser, "main").text  # the markup as text, not as elements
    assert browser.execute_script("return window.__pwned") is None
    assert all_css(browser, "main script") == [] and all_css(browser, 'main img[src="x"]') == []

    # Even a script that did get into the page would not run: the policy allows no inline script.
    browser.execute_script("const s = document.createElement('script'); s.textContent = 'window.__pwned = true';"
                           "document.body.appendChild(s);")
    assert browser.execute_script("return window.__pwned") is None
    assert any("Content Security Policy" in entry["message"] for entry in browser.get_log("browser"))
    with urllib.request.urlopen(browser.current_url) as response:
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy


def calibration_figures(browser: Any, base: str) -> tuple[str, str]:
    browser.get(base + "/calibration?rubric=eth&channel=all")
    return by_css(browser, "#labels").text, by_css(browser, "#agreement").text


def test_three_cases_labeled_in_the_browser_move_calibration_as_judgebot_calibration_counts_them(
        site: tuple[str, Demo, Path], browser: Any) -> None:
    base, _, folder = site
    browser.get(base + "/calibration?rubric=eth&channel=all")
    assert "No label of eth here yet" in by_css(browser, "main").text and all_css(browser, "#labels") == []

    for passed, tag, note in (("pass", "Correct", "names <b>myStudies</b>"), ("fail", "Hallucination", ""),
                              ("fail", "", "")):
        browser.get(base + "/review?channel=terminal")
        by_css(browser, 'form[action="/review/next"] button').click()
        arrive(browser, "/review/cases/")
        assert "The judge said" in by_css(browser, "dl.facts").text  # the terminal's queue is never blind
        choose(browser, 'select[name="passed"]', passed)
        choose(browser, 'select[name="tag"]', tag)
        by_css(browser, 'textarea[name="note"]').send_keys(note)
        by_css(browser, 'form[action$="/label"] button[type="submit"]').click()
        assert "/rows/" in arrive(browser, "saved=1") and "Your label is saved" in by_css(browser, "main").text

    code, found, stderr = judgebot_json(folder, "calibration", "--rubric", "eth")
    assert code == 0, stderr
    assert found["labels"] == 3
    agreement = found["figures"]["pass_fail"]["agreement"]
    after = calibration_figures(browser, base)
    assert after == ("3", f"{round(agreement * 100)}%")
    assert agreement == pytest.approx(2 / 3)  # the judge said fail three times; two labels say fail
