"""Benchmark the web view on a big history: every page timed over real HTTP against the 300 ms target.

Builds (once; kept at --db for the next run) a SQLite history of 1,000,000 judgments with one run of 20,000 rows
(bench/view_history.py), serves `judgebot view`'s app on 127.0.0.1 and asks each page several times, printing the
median and the slowest answer of each; then each calibration page first after a person's vote (turned the other way
each time), which a kept report does not answer. Run by hand, e.g.:

    python bench/bench_view.py --db /tmp/view-bench.db
    python bench/bench_view.py --db /tmp/view-bench.db --repeats 9 --only runs/
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.view_history import BIG_CHANNEL, BIG_MODELS, CHANNELS, build
from bot.config import Settings
from bot.rubric import load_rubrics
from bot.store import Store, record_feedback
from bot.view import make_view_app, serve_view
from bot.view.serving import loopback_hosts

TARGET_MS = 300
NAME_WIDTH = 44  # the widest page name


@contextmanager
def served(db: Path) -> Iterator[int]:
    """The view of the history at `db` served on 127.0.0.1 from a thread of its own; its port."""
    url = f"sqlite:///{db}"
    store = Store.open(url)
    loop = asyncio.new_event_loop()
    started: asyncio.Future[int] = loop.create_future()
    app = make_view_app(Settings(_env_file=None, database_url=url), store, rubrics=load_rubrics(),
                        allowed_hosts=loopback_hosts("127.0.0.1"))
    task = loop.create_task(serve_view(app, host="127.0.0.1", port=0, started=started))

    def run() -> None:
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    port = asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(started), 30), loop).result(35)
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
        store.engine.dispose()


class Client:
    """One browser: a kept-alive connection and the session cookie."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookie = ""
        self.cpu: list[float] = []  # CPU of this process (server thread and client) per request, ms
        self.refused: list[str] = []  # the comparisons answered 400 (no judgment of a model in the period)

    def ask(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, dict[str, str], float]:
        body = urllib.parse.urlencode(form) if form is not None else None
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        began, cpu = time.perf_counter(), time.process_time()
        self.http.request(method, path, body=body, headers=headers)
        response = self.http.getresponse()
        text = response.read().decode("utf-8")
        took = (time.perf_counter() - began) * 1000
        self.cpu.append((time.process_time() - cpu) * 1000)
        found = response.getheader("Set-Cookie")
        if found:
            self.cookie = found.split(";", 1)[0]
        return response.status, text, dict(response.getheaders()), took


def ids(client: Client) -> dict[str, str]:
    """What the pages are asked about: the big run, one of its rows, an open case of its queue."""
    status, text, _, _ = client.ask("GET", "/runs")
    assert status == 200, text[:500]
    big = re.search(r'href="/runs/(\d+)"', text)
    assert big, "no run listed"
    run = big.group(1)
    status, text, _, _ = client.ask("GET", f"/runs/{run}?sort=-headline")
    row = re.search(r'href="/rows/(\d+)"', text)
    assert row, "no row listed"
    return {"run": run, "row": row.group(1)}


def pages(found: dict[str, str]) -> dict[str, str]:
    run, model, other = found["run"], BIG_MODELS[0], BIG_MODELS[1]
    channel = CHANNELS[0]
    return {
        "runs list": "/runs",
        "runs list, page 5": "/runs?page=5",
        "20,000-row run": f"/runs/{run}",
        "  its page 200 of 400": f"/runs/{run}?page=200",
        "  model + fail (2 selections)": f"/runs/{run}?model={model}&outcome=fail",
        "  status error": f"/runs/{run}?status=error",
        "  tag Hallucination": f"/runs/{run}?tag=Hallucination",
        "  flag unsure": f"/runs/{run}?flag=unsure",
        "  flag review": f"/runs/{run}?flag=review",
        "  flag injection": f"/runs/{run}?flag=injection",
        "  search 'Euler'": f"/runs/{run}?q=Euler",
        "  search, no match": f"/runs/{run}?q=nowhere+to+be+found",
        "  sort by headline": f"/runs/{run}?sort=headline",
        "  sort -headline, page 300": f"/runs/{run}?sort=-headline&page=300",
        "  model + fail, by headline": f"/runs/{run}?model={model}&outcome=fail&sort=-headline",
        "a row": f"/rows/{found['row']}",
        "compare 2 models of the run": f"/compare?model={model}&model={other}&run={run}",
        f"compare 2 models in {channel}": f"/compare?model={model}&model={other}&channel={channel}",
        f"compare, {channel}, 90 days": f"/compare?model={model}&model={other}&channel={channel}&since=90d",
        "calibration, every channel": "/calibration?rubric=eth&channel=all",
        f"calibration, {channel}": f"/calibration?rubric=eth&channel={channel}",
        "calibration, all, 30 days": "/calibration?rubric=eth&channel=all&since=30d",
        f"calibration, {channel}, 90 days": f"/calibration?rubric=eth&channel={channel}&since=90d",
        f"trend {channel}, 12 weeks": f"/trend?channel={channel}",
        f"trend {channel}, 26 weeks": f"/trend?channel={channel}&weeks=26",
        f"trend {BIG_CHANNEL}": f"/trend?channel={BIG_CHANNEL}",
        f"review queue {BIG_CHANNEL}": f"/review?channel={BIG_CHANNEL}",
        "review queue, terminal": "/review?channel=terminal",
    }


def changed(asked: dict[str, str]) -> dict[str, str]:
    """The pages whose report is kept until the history changes, each asked first after a change."""
    return {f"{name}, after a vote": path for name, path in asked.items() if name.startswith("calibration")}


def timed(client: Client, path: str, repeats: int, *, refusals: bool = False) -> list[float]:
    """How long each of `repeats` requests of `path` took (ms); each must answer 200 (or, with `refusals`, a 400
    saying what is missing: a comparison of models with no judgment in the period)."""
    times = []
    for _ in range(repeats):
        status, text, _, took = client.ask("GET", path)
        assert status == 200 or (refusals and status == 400), f"{path}: {status} {text[:300]}"
        assert status == 200 or not client.refused.append(path)
        times.append(took)
    return times


def take_case(client: Client, channel: str, repeats: int) -> tuple[list[float], list[float]]:
    """Taking the next case of a queue (POST /review/next, its redirect not followed) and its labeling form."""
    takes, forms = [], []
    for _ in range(repeats):
        _, page, _, _ = client.ask("GET", f"/review?channel={channel}")
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token, "no CSRF token on the queue page"
        status, text, headers, took = client.ask("POST", "/review/next", {"channel": channel,
                                                                         "csrf_token": token.group(1)})
        assert status == 303, f"/review/next: {status} {text[:300]}"
        takes.append(took)
        where = headers["Location"]
        forms += timed(client, where, 1)
        assert "/review/cases/" in where, where
    return takes, forms


def after_a_vote(client: Client, db: Path, path: str, repeats: int) -> list[float]:
    """The first request of `path` after each of `repeats` changes of the history (a person's vote on a judgment of
    the first channel, turned the other way each time): what a page whose report is kept costs when it is not."""
    store = Store.open(f"sqlite:///{db}")
    try:
        with store.engine.connect() as conn:
            judgment = conn.exec_driver_sql("SELECT id FROM judgment WHERE channel_id = ? AND status = 'scored' "
                                            "ORDER BY id LIMIT 1", (CHANNELS[0],)).scalar_one()
        times = []
        for turn in range(repeats):
            record_feedback(store, judgment_id=judgment, user_id="U0BENCH", agree=turn % 2 == 0)
            times += timed(client, path, 1)
        return times
    finally:
        store.engine.dispose()


def line(name: str, times: list[float], cpu: list[float]) -> str:
    median, worst = statistics.median(times), max(times)
    mark = "ok" if worst < TARGET_MS else ("median ok" if median < TARGET_MS else "OVER")
    return f"{name:<{NAME_WIDTH}} {median:8.0f} {worst:8.0f} {statistics.median(cpu):8.0f}   {mark}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="the SQLite history (built there when empty or missing; default: a "
                        "temporary file, built anew)")
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5, help="requests per page (the first one included)")
    parser.add_argument("--only", default="", help="time only the pages whose name or address holds this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch) / "view.db"
        store = Store.open(f"sqlite:///{db}")
        with store.engine.connect() as conn:  # closed at once: a connection left open holds SQLite's write lock
            filled = conn.exec_driver_sql("SELECT count(*) FROM run").scalar()
        if not filled:
            print(f"building a history of {args.judgments:,} judgments in {db} ...")
            build(store, judgments=args.judgments)
        store.engine.dispose()
        print(f"{db}: {db.stat().st_size / 1e6:.0f} MB")
        with served(db) as port:
            client = Client(port)
            asked = pages(ids(client))
            print(f"{'page':<{NAME_WIDTH}} {'median':>8} {'max':>8} {'cpu':>8}   (ms over {args.repeats} requests; target "
                  f"{TARGET_MS} ms; cpu: the median CPU time of the server and client per request)")
            for name, path in asked.items():
                if args.only in name or args.only in path:
                    client.cpu.clear()
                    times = timed(client, path, args.repeats, refusals=name.startswith("compare"))
                    refused = " (answered 400: no judgment of a model)" if path in client.refused else ""
                    print(line(name, times, client.cpu) + refused, flush=True)
            for name, path in changed(asked).items():
                if args.only in name or args.only in path:
                    client.cpu.clear()
                    print(line(name, after_a_vote(client, db, path, args.repeats), client.cpu), flush=True)
            if not args.only or "review" in args.only:
                client.cpu.clear()
                takes, forms = take_case(client, BIG_CHANNEL, args.repeats)
                print(line("take the next case (POST)", takes, client.cpu[1::3]))
                print(line("labeling form", forms, client.cpu[2::3]))


if __name__ == "__main__":
    main()
