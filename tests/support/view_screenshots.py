"""Screenshots of the web view's main pages for docs/view.md, taken in headless Chromium over the demo history:
`python -m tests.support.view_screenshots [--out docs/view]`."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.rubric import load_rubrics
from bot.store import Store
from tests.support.view_browser import arrive, browser_missing, chromium, demo_history, served_view

WIDTH = 1200


def shoot(driver: Any, url: str, path: Path) -> None:
    """The whole page at `url` (its full height, up to 2,400 pixels) into `path`."""
    driver.set_window_size(WIDTH, 800)
    driver.get(url)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(WIDTH, min(max(int(height), 400), 2400))
    driver.save_screenshot(str(path))
    print(f"{path}  ({url})")


def label_two(driver: Any, base: str) -> str:
    """Two cases of the terminal's queue labeled through the form (so calibration has figures); the form's address
    of the third, left open."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    for passed, tag in (("fail", "Hallucination"), ("pass", "Correct")):
        driver.get(base + "/review?channel=terminal")
        driver.find_element(By.CSS_SELECTOR, 'form[action="/review/next"] button').click()
        arrive(driver, "/review/cases/")
        Select(driver.find_element(By.CSS_SELECTOR, 'select[name="passed"]')).select_by_value(passed)
        Select(driver.find_element(By.CSS_SELECTOR, 'select[name="tag"]')).select_by_value(tag)
        driver.find_element(By.CSS_SELECTOR, 'form[action$="/label"] button[type="submit"]').click()
        arrive(driver, "saved=1")
    driver.get(base + "/review?channel=terminal")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/review/next"] button').click()
    return arrive(driver, "/review/cases/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("docs/view"), help="folder of the PNG files")
    out = parser.parse_args().out
    missing = browser_missing()
    if missing:
        raise SystemExit(missing)
    out.mkdir(parents=True, exist_ok=True)
    rubrics = load_rubrics()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'h.db'}"
        store = Store.open(url)
        demo = demo_history(store, rubrics)
        driver = chromium(width=WIDTH)
        try:
            with served_view(Settings(_env_file=None, database_url=url), store, rubrics) as base:
                form = label_two(driver, base)
                pages = {
                    "runs": "/runs",
                    "run": f"/runs/{demo.run_id}?model=gpt-b&outcome=fail",
                    "row": f"/rows/{demo.row_ids[2]}",
                    "compare": f"/compare?a={demo.before_run_id}&b={demo.after_run_id}",
                    "calibration": "/calibration?rubric=eth&channel=all",
                    "trend": "/trend?channel=C1",
                    "review": "/review?channel=terminal",
                }
                for name, path in pages.items():
                    shoot(driver, base + path, out / f"{name}.png")
                shoot(driver, form, out / "label.png")
        finally:
            driver.quit()
            store.engine.dispose()


if __name__ == "__main__":
    main()
