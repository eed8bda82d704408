"""A run's rows (filtered by model, status, tag, pass/fail and flags, searched, sorted by headline, a page at a time,
in SQL) and one row whole: its texts, every criterion, the reasoning, the samples or jury members, labels and votes."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.records import context_of
from bot.store import (
    FLAGS,
    OUTCOMES,
    SORTS,
    Judgment,
    RowFilter,
    Run,
    feedback_tally,
    get_judgment,
    get_run,
    labels_of,
    row_facets,
    run_rows,
    samples_of,
)
from bot.view.context import number, store, viewer
from bot.view.templates import render

PAGE = 50  # rows a page lists
NO_MODEL = "(none)"  # how the filter names rows without a model under test


def visible_run(request: web.Request, run_id: int) -> Run:
    """The run, when the viewer may see its channel; 404 otherwise (nothing says whether it exists)."""
    run = get_run(store(request), run_id)
    if run is None or not viewer(request).sees(run.channel_id):
        raise web.HTTPNotFound(text=f"No run {run_id} here: the runs page lists those you may see.")
    return run


def visible_row(request: web.Request, judgment_id: int) -> Judgment:
    """The row, when the viewer may see its channel; 404 otherwise."""
    judgment = get_judgment(store(request), judgment_id)
    if judgment is None or not viewer(request).sees(judgment.channel_id):
        raise web.HTTPNotFound(text=f"No row {judgment_id} here.")
    return judgment


def row_filter(request: web.Request) -> tuple[RowFilter, dict[str, str]]:
    """The filters a run's page was asked for, and the query parameters that ask for them again (for links)."""
    asked = {key: request.query.get(key, "").strip() for key in ("model", "status", "tag", "outcome", "flag", "q", "sort")}
    model = asked["model"]
    wanted = RowFilter(model=None if not model else "" if model == NO_MODEL else model,
                       status=asked["status"] or None, tag=asked["tag"] or None,
                       outcome=asked["outcome"] if asked["outcome"] in OUTCOMES else None,
                       flag=asked["flag"] if asked["flag"] in FLAGS else None, text=asked["q"][:200] or None,
                       sort=asked["sort"] if asked["sort"] in SORTS else "row")
    return wanted, {key: value for key, value in asked.items() if value}


async def run_page(request: web.Request) -> web.StreamResponse:
    """GET /runs/{run_id}: a page of the run's rows as the filters ask."""
    run = visible_run(request, int(request.match_info["run_id"]))
    wanted, params = row_filter(request)
    page = number(request, "page", 1)
    found, total = run_rows(store(request), run.id, wanted, limit=PAGE, offset=(page - 1) * PAGE)
    facets = row_facets(store(request), run.id)
    pages = max((total + PAGE - 1) // PAGE, 1)
    return render(request, "run.html", title=f"Run {run.id}", run=run, rows=found, total=total, page=page,
                  pages=pages, params=params, facets=facets, wanted=wanted, no_model=NO_MODEL, flags=FLAGS,
                  sorts={"row": "row order", "headline": "headline, lowest first", "-headline": "headline, highest first"})


def fields_of(values: dict[str, Any] | None) -> list[tuple[str, Any, bool]]:
    """A verdict's fields as (name, value, long text) in the judge's order, nested objects flattened with dots."""
    found: list[tuple[str, Any, bool]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        else:
            found.append((prefix, value, isinstance(value, str) and (len(value) > 80 or "\n" in value)))

    walk("", values or {})
    return found


async def row_page(request: web.Request) -> web.StreamResponse:
    """GET /rows/{judgment_id}: the row whole."""
    judgment = visible_row(request, int(request.match_info["judgment_id"]))
    history = store(request)
    run = get_run(history, judgment.run_id)
    agree, disagree = feedback_tally(history, judgment_id=judgment.id)
    samples = [(sample, fields_of(sample.output)) for sample in samples_of(history, judgment.id)]
    return render(request, "row.html", title=f"Row {judgment.row_number or judgment.id} of run {judgment.run_id}",
                  row=judgment, run=run, passages=context_of(judgment.context) or [], criteria=fields_of(judgment.output),
                  derived=fields_of(judgment.derived), samples=samples, labels=labels_of(history, judgment.id),
                  agree=agree, disagree=disagree, saved=request.query.get("saved") == "1")
