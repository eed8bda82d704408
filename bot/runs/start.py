"""Starting a run: the run and every row persisted (pending, or malformed with its reason) before judging."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain, zip_longest
from typing import Any

from pydantic import BaseModel

from bot.csvfiles.passages import kept_cell
from bot.csvfiles.rows import CsvRow, CsvSource, MalformedRow, capped_model_name
from bot.errors import CsvError, RunBusy
from bot.records import RowState, RunState, Triple, checks_of, context_text
from bot.rubric import Rubric
from bot.store import LOAD_LOST, Run, Store, add_rows, create_run, iter_columns, process_name, unfinished_runs, update_run, utcnow

ONE_TRIPLE = "one triple"  # the source name of a run of one triple: it has a verdict to show, no results file
FILE_SOURCE = "slack-file"  # the source of runs over a file shared in Slack: the runs replicas judge together
# What makes two runs' rows the same rows (a malformed row's texts are empty, and its status says so).
SAME_ROW = ("row_number", "question", "reference", "answer", "answer_b", "model_name", "model_b", "swapped", "cells",
            "context")


def pairs_origin(origin: Origin) -> Origin:
    """Where a pairwise run's judgments belong: beside the checks of its channel (or of the terminal), so that a
    verdict saying which answer won never counts as a model's score."""
    return origin.model_copy(update={"channel_id": checks_of(origin.channel_id)})


class Origin(BaseModel):
    """Who asked for a run and where its results belong (Slack fields stay empty in a terminal)."""

    source: str = "cli"
    team_id: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None
    user_id: str | None = None


def _run_fields(rubric: Rubric, judge_model: str, origin: Origin) -> dict[str, Any]:
    return {
        "rubric_name": rubric.name, "rubric_version": rubric.version, "rubric_hash": rubric.content_hash,
        "judge_model": judge_model, **origin.model_dump(exclude={"source"}),
    }


def start_run(
    store: Store,
    *,
    rubric: Rubric,
    rows: Iterable[CsvRow | MalformedRow],
    judge_model: str,
    columns: list[str],
    column_roles: dict[str, str] | None = None,
    source_name: str | None = None,
    model_name: str | None = None,
    fresh: bool = False,
    origin: Origin | None = None,
    message_ts: str | None = None,
    results_path: str | None = None,
    samples: int = 1,
    judges: list[dict[str, Any]] | None = None,
    temperature: float | None = None,
    swap: bool = True,
    context_column: str | None = None,
) -> Run:
    """Persist a run and every row (pending, or malformed with its reason) before anything is judged.

    `column_roles` is the file's column of each role ({"answer": "model_response"}), shown in every summary;
    `message_ts` is the chat message that will show the rows' verdicts (a card waiting for its one judgment);
    `results_path` is where the terminal writes its results CSV, kept so that `judgebot resume` writes there too.
    `samples`, `judges` and `temperature` say how a panel judges the rows (`Panel.run_fields()`), so a resume asks
    the same judges the same way.
    A row's retrieved passages are kept once, in its `context`: its cell of the context column (`context_column`, else
    the column of the context role) is kept as the way to write it back from them (bot.csvfiles.passages).
    A pairwise rubric's rows are pairs of answers: each is saved twice, once shown A first and once B first, or with
    `swap` off once, every other pair B first (so that a judge's liking for a position favours neither side). Their
    judgments stay out of the channel's figures of models, like a check's (see `checks_of`).
    """
    origin = pairs_origin(origin or Origin()) if rubric.pairwise else origin or Origin()
    model_name = capped_model_name(model_name)  # typed once for the whole run: --model-name, a shared file's message
    common = _run_fields(rubric, judge_model, origin)
    owner = process_name()  # a run left loading by a process that is gone is failed when the history is next opened
    run = create_run(store,
        **common, status=RunState.LOADING, owner=owner, heartbeat_at=utcnow(), source=origin.source,
        source_name=source_name, columns=columns, column_roles=column_roles, model_name=model_name, fresh=fresh,
        results_path=results_path, samples=samples, judges=judges, temperature=temperature,
    )

    fields = {**common, "message_ts": message_ts}
    if rubric.pairwise:  # every row of a batch inserts the same columns
        fields |= {"answer_b": None, "model_b": None, "swapped": None}
    judgment_rows = _judgment_rows(run.id, rows, fields, columns=columns, model_name=model_name,
                                   pairwise=rubric.pairwise, swap=swap,
                                   context_column=context_column or (column_roles or {}).get("context"))

    try:
        total = add_rows(store, judgment_rows)
    except RunBusy:  # another process failed the run and dropped its rows: nothing more of it is ours to change
        raise
    except BaseException as err:  # a half-loaded run must never look resumable
        update_run(store, run.id, status=RunState.FAILED, stop_reason=f"loading the rows failed: {err}", owner=None)
        raise
    if not update_run(store, run.id, held_by=owner, status=RunState.PENDING, total_rows=total, owner=None):
        raise RunBusy(LOAD_LOST.format(run_id=run.id))
    run.status, run.total_rows, run.owner = RunState.PENDING, total, None
    return run


def _judgment_rows(run_id: int, rows: Iterable[CsvRow | MalformedRow], fields: dict[str, Any], *, columns: list[str],
                   model_name: str | None, pairwise: bool, swap: bool,
                   context_column: str | None = None) -> Iterator[dict[str, Any]]:
    """The judgment rows a run saves for the rows of its source (see `start_run`), `fields` in each."""
    for row in rows:
        if isinstance(row, MalformedRow):
            yield {**fields, "run_id": run_id, "row_number": row.line, "status": RowState.MALFORMED, "error": row.reason,
                   "question": "", "reference": "", "answer": "", "model_name": row.model or model_name,
                   "cells": dict(zip(columns, row.cells)), "context": None}
            continue
        context, cells = _passages_once(row, context_column)
        if pairwise:
            pair = {**fields, "run_id": run_id, "row_number": row.line, "status": RowState.PENDING,
                    "question": row.question, "reference": row.reference, "answer": row.answer,
                    "answer_b": row.answer_b or "", "model_name": row.model, "model_b": row.model_b, "cells": cells,
                    "context": context}
            orders = (False, True) if swap else (row.line % 2 == 1,)
            yield from ({**pair, "swapped": swapped} for swapped in orders)
        else:
            yield {**fields, "run_id": run_id, "row_number": row.line, "status": RowState.PENDING,
                   "question": row.question, "reference": row.reference, "answer": row.answer,
                   "model_name": row.model or model_name, "cells": cells, "context": context}


def _passages_once(row: CsvRow, context_column: str | None) -> tuple[str | None, dict[str, Any]]:
    """A row's passages as the history keeps them (`context_text`), and its cells with the context cell kept as the
    way to write it back from them rather than a second copy (bot.csvfiles.passages)."""
    context = context_text(row.context)
    if row.context is None or context is None or context_column is None or context_column not in row.cells:
        return context, row.cells
    cells: dict[str, Any] = dict(row.cells)
    cells[context_column] = kept_cell(row.cells[context_column], row.context, context)
    return context, cells


def unfinished_run_of(store: Store, *, rubric: Rubric, source: CsvSource, judge_model: str, samples: int = 1,
                      judges: list[dict[str, Any]] | None = None, temperature: float | None = None,
                      model_name: str | None = None, fresh: bool = False, swap: bool = True,
                      origin: Origin | None = None) -> Run | None:
    """The newest unfinished run (pending, running or paused) from `origin`'s source over these very rows: a file of
    the same name and columns, judged with the same rubric version, judges and options, row for row the same cells.
    Judging the file again would start another run beside it (and pay again for the rows it judged)."""
    model_name = capped_model_name(model_name)
    wanted = {"source_name": source.path.name, "columns": source.headers, "column_roles": source.columns,
              "rubric_name": rubric.name, "rubric_hash": rubric.content_hash, "judge_model": judge_model,
              "samples": samples, "judges": judges, "temperature": temperature, "model_name": model_name, "fresh": fresh}
    for run in reversed(unfinished_runs(store, source=(origin or Origin()).source)):
        if any(getattr(run, key) != value for key, value in wanted.items()):
            continue
        saved = ({key: getattr(row, key, None) for key in SAME_ROW} for row in iter_columns(store, run.id))
        made = ({key: row.get(key) for key in SAME_ROW}
                for row in _judgment_rows(run.id, source, {}, columns=source.headers, model_name=model_name,
                                          pairwise=rubric.pairwise, swap=swap,
                                          context_column=source.columns.get("context")))
        if all(a == b for a, b in zip_longest(saved, made)):
            return run
    return None


def start_csv_run(store: Store, *, rubric: Rubric, source: CsvSource, **kwargs: Any) -> Run:
    """Start a run over every row of an opened CSV file.

    Raises:
        CsvError: The file has no data rows (no run is made for it).
    """
    rows = iter(source)
    first = next(rows, None)
    if first is None:
        raise CsvError(f"{source.path.name} has a header but no data rows; add the rows below the header")
    return start_run(store, rubric=rubric, rows=chain([first], rows), columns=source.headers,
                     column_roles=source.columns, source_name=source.path.name, **kwargs)


def start_single_run(store: Store, *, rubric: Rubric, triple: Triple, **kwargs: Any) -> Run:
    """Start a run of one triple (a command or a card rather than a file), named ONE_TRIPLE."""
    cells = {"question": triple.question, "reference": triple.reference, "answer": triple.answer}
    if triple.context is not None:  # the passages as a context cell reads them back: a JSON list of strings
        cells["context"] = context_text(triple.context) or ""
    row = CsvRow(line=1, question=triple.question, reference=triple.reference, answer=triple.answer, model=None,
                 cells=cells, context=triple.context)
    return start_run(store, rubric=rubric, rows=[row], columns=list(cells), source_name=ONE_TRIPLE,
                     context_column="context", **kwargs)
