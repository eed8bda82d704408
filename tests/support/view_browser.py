"""A small history for the web view, the view served from a thread of its own, and headless Chromium to read it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

from bot.config import Settings
from bot.records import Verdict
from bot.rubric import Rubric, RubricSet
from bot.store import Store, add_rows, create_run, get_judgment, iter_judgments, save_verdict, update_run
from bot.trust.review import send_to_review
from bot.view import make_view_app, serve_view
from bot.view.serving import loopback_hosts

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = ("the browser tests need Debian's headless Chromium and its driver: run `apt-get install -y chromium "
           "chromium-driver` (as root; they land in /usr/bin/chromium and /usr/bin/chromedriver) and "
           "`pip install 'selenium>=4.20'` (in the test extra)")
INJECTED = "<script>window.__pwned = true</script><img src=x onerror=\"window.__pwned = true\">"
MODELS = ("gpt-a", "gpt-b")


@dataclass(frozen=True)
class Demo:
    """What the demo history holds: its runs, and how many failing rows of gpt-b the first run has."""

    run_id: int
    other_run_id: int
    before_run_id: int  # gpt-a alone, then
    after_run_id: int  # gpt-c alone, on the same questions
    queued_run_id: int
    failing_b: int
    row_ids: list[int]


QUESTIONS = (
    ("Where do I print on campus?", "Use Web Print with your ETH account."),
    ("How do I register for exams?", "Register in myStudies during the registration period."),
    ("How do I book a sports course?", "Book it on the ASVZ website with your ETH login."),
    ("Where do I find my grades?", "myStudies shows every grade."),
    ("How do I get on the Euler cluster?", "Request an account for the Euler cluster through the IT services."),
    ("How do I reset my ETH password?", "Change it in the Identity and Access Management portal (IAM)."),
)
ANSWERS = {  # what a model says when the judge tags it so
    "Correct": "{reference} (From the ETH pages.)",
    "Generic": "Ask your department's office; they usually know.",
    "Refusal": "I don't have access to ETH's internal systems, sorry.",
    "Hallucination": "Use the ETH Portal at portal.eth-students.example, under Services.",
}
SCORES = {"Correct": (2, 2), "Generic": (0, 1), "Refusal": (0, 0), "Hallucination": (0, 0)}


@dataclass(frozen=True)
class Judged:
    """One row of a run to build: the model under test, the tag its answer earns (None: the judge failed), and how
    many days ago it was judged."""

    model: str | None
    tag: str | None
    days_ago: int = 0


def eth_verdict(eth: Rubric, tag: str | None, judge: str) -> Verdict:
    """What the judge made of an answer tagged `tag`, scored by the eth rubric itself (None: an error)."""
    common: dict[str, Any] = {"rubric_name": eth.name, "rubric_version": eth.version, "rubric_hash": eth.content_hash,
                              "judge_model": judge, "prompt_hash": "p" * 32}
    if tag is None:
        return Verdict(status="error", error="the judge's endpoint answered 503 three times", attempts=3, **common)
    correctness, completeness = SCORES[tag]
    output = {"correctness": correctness, "completeness": completeness, "result_tag": tag,
              "reasoning": f"{tag}: the ground truth names the ETH tool; the answer "
                           f"{'names it' if tag == 'Correct' else 'does not'}."}
    scoring = eth.score(output)
    return Verdict(status="scored", output=output, derived=dict(scoring.derived), headline=scoring.headline,
                   passed=scoring.passed, label=scoring.label, tag=scoring.tag, raw_reply=json.dumps(output),
                   tokens_in=420, tokens_out=60, latency_ms=900, attempts=1, **common)


def judged_run(store: Store, eth: Rubric, rows: list[Judged], *, channel: str, user: str) -> list[int]:
    """A run started from Slack in `channel`, its rows judged as described; the judgment ids in row order."""
    common: dict[str, Any] = {"rubric_name": eth.name, "rubric_version": eth.version, "rubric_hash": eth.content_hash,
                              "judge_model": "gpt-4o-mini", "channel_id": channel, "team_id": "T1"}
    run = create_run(store, **common, source="slack", user_id=user, source_name="answers.csv")
    add_rows(store, [{**common, "run_id": run.id, "row_number": n + 2, "status": "pending", "model_name": row.model,
                      "user_id": user, "question": QUESTIONS[n % len(QUESTIONS)][0],
                      "reference": QUESTIONS[n % len(QUESTIONS)][1],
                      "answer": ANSWERS[row.tag or "Generic"].format(reference=QUESTIONS[n % len(QUESTIONS)][1])}
                     for n, row in enumerate(rows)])
    ids = []
    for judgment, row in zip(iter_judgments(store, run.id), rows, strict=True):
        with time_machine.travel(datetime.now(UTC) - timedelta(days=row.days_ago), tick=False):
            assert save_verdict(store, judgment.id, eth_verdict(eth, row.tag, "gpt-4o-mini"), cache_key=f"k{judgment.id}")
        ids.append(judgment.id)
    update_run(store, run.id, status="done")
    return ids


def model_rows(shift: int) -> list[Judged]:
    """24 rows over two models, some failing, and one the judge failed; `shift` moves which ones fail."""
    rows = []
    for n in range(24):
        failing = (n + shift) % 3 == 0
        tag = ("Hallucination" if n % 2 else "Generic") if failing else "Correct"
        rows.append(Judged(MODELS[n % 2], tag, days_ago=n % 20))
    return [*rows, Judged("gpt-a", None)]


def queue_cases(store: Store, rubrics: RubricSet, *, rows: int) -> int:
    """A terminal run of `rows` unsure failing verdicts of eth (one answer holds a script), each sent to review."""
    eth = rubrics.get("eth")
    common: dict[str, Any] = {"rubric_name": "eth", "rubric_version": eth.version, "rubric_hash": eth.content_hash,
                              "judge_model": "judge-m", "channel_id": None, "team_id": None}
    run = create_run(store, **common)
    add_rows(store, [{**common, "run_id": run.id, "row_number": n, "status": "pending", "model_name": "gpt-b",
                      "question": f"Where do I print on campus ({n})?", "reference": "Use myStudies and webprint.",
                      "answer": f"On the portal {n}. {INJECTED if n == 1 else ''}"} for n in range(1, rows + 1)])
    output = {"correctness": 0, "completeness": 0, "result_tag": "Hallucination", "reasoning": "Names no portal."}
    verdict = Verdict(status="scored", output=output, headline=0.0, passed=False, label="Hallucination",
                      tag="Hallucination", raw_reply="{}", prompt_hash="p" * 32, unsure=True, samples=3,
                      **{key: common[key] for key in ("rubric_name", "rubric_version", "rubric_hash", "judge_model")})
    for row in iter_judgments(store, run.id):
        assert save_verdict(store, row.id, verdict, cache_key=f"k{row.id}")
    send_to_review(store, run, rate=0)
    return run.id


def demo_history(store: Store, rubrics: RubricSet) -> Demo:
    """Two Slack runs of two models in channel C1, two of one model each on the same questions in C2 (to compare),
    and a terminal run whose four cases wait for a label."""
    eth = rubrics.get("eth")
    first = model_rows(0)
    ids = judged_run(store, eth, first, channel="C1", user="U1")
    other = judged_run(store, eth, model_rows(1), channel="C1", user="U2")
    before = judged_run(store, eth, [Judged("gpt-a", "Correct" if n % 3 else "Generic", days_ago=9) for n in range(12)],
                        channel="C2", user="U3")
    after = judged_run(store, eth, [Judged("gpt-c", "Correct" if n % 4 else "Refusal") for n in range(12)],
                       channel="C2", user="U3")
    queued = queue_cases(store, rubrics, rows=4)
    update_run(store, queued, status="done")
    failing_b = sum(1 for row in first if row.model == "gpt-b" and row.tag not in (None, "Correct"))
    return Demo(run_id=run_of(store, ids[0]), other_run_id=run_of(store, other[0]),
                before_run_id=run_of(store, before[0]), after_run_id=run_of(store, after[0]), queued_run_id=queued,
                failing_b=failing_b, row_ids=ids)


def run_of(store: Store, judgment_id: int) -> int:
    """The run a judgment belongs to."""
    judgment = get_judgment(store, judgment_id)
    assert judgment is not None
    return judgment.run_id


@contextmanager
def served_view(settings: Settings, store: Store, rubrics: RubricSet) -> Iterator[str]:
    """The real view app served on 127.0.0.1 from a thread with its own event loop; its base address."""
    loop = asyncio.new_event_loop()
    started: asyncio.Future[int] = loop.create_future()
    app = make_view_app(settings, store, rubrics=rubrics, allowed_hosts=loopback_hosts("127.0.0.1"))
    task = loop.create_task(serve_view(app, host="127.0.0.1", port=0, started=started))

    def run() -> None:
        with suppress(asyncio.CancelledError):
            loop.run_until_complete(task)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    port = asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(started), 10), loop).result(15)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
        loop.close()


def browser_missing() -> str | None:
    """Why headless Chromium cannot be driven here (a sentence saying how to install it), or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return INSTALL
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) or not (
            os.path.exists(CHROMEDRIVER) or shutil.which("chromedriver")):
        return INSTALL
    return None


def chromium(*, width: int = 1280, height: int = 900) -> Any:
    """A headless Chromium driven through Selenium, its console log kept (to see a blocked script)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium") or CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--no-first-run", f"--window-size={width},{height}",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = CHROMEDRIVER if os.path.exists(CHROMEDRIVER) else shutil.which("chromedriver") or CHROMEDRIVER
    return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))


def arrive(driver: Any, part: str, *, timeout: float = 10) -> str:
    """The browser's address once it holds `part` (after a click that submits a form and follows its redirect)."""
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, timeout).until(lambda d: part in d.current_url)
    return str(driver.current_url)
