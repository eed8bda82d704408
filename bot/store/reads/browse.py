"""What the web view reads a page at a time: runs with their figures, a run's rows filtered, searched, sorted and
paged in SQL, each week's counted figures per model, and the channels whose review queues hold open cases; every
read limited to the channels the viewer may see."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import func, literal, select, union_all

from bot.records import RowState
from bot.store.clock import utcnow
from bot.store.reads.channel import counted_in_channel
from bot.store.reads.stats import model_of
from bot.store.runs.listing import PROCESS_GONE, SHOWN_INTERRUPTED, gone_while_running, never_started
from bot.store.tables.as_read import Run
from bot.store.tables.core import JUDGMENT, RUN
from bot.store.tables.history import BilledTally, table_of
from bot.store.tables.trust import ReviewCase
from bot.store.trust.review import OPEN

if TYPE_CHECKING:
    from bot.store.database import Store

Channels = frozenset[str] | None  # the channels a viewer may see; None: every channel and the terminal
QUESTION_SHOWN = 160  # characters of a row's question a list of rows reads
SORTS = ("row", "headline", "-headline")  # a run's rows: in file order, lowest headline first, highest first
FLAGS = ("unsure", "injection", "review")  # what a row can be flagged for
OUTCOMES = ("pass", "fail")
INJECTION_WORDS = ("%prompt injection%", "%shaped like a verdict%")  # bot.judge.injection_screen's warnings


def visible(column: Any, channels: Channels) -> Any:
    """SQL: a channel column the viewer may see (None: every channel, the terminal's judgments among them)."""
    if channels is None:
        return sa.true()
    return column.in_(sorted(channels)) if channels else sa.false()


def listed(run: Run, now: datetime) -> Run:
    """A run as lists show it: one whose process is gone while it ran shown as interrupted."""
    if gone_while_running(run.status, run.owner, run.heartbeat_at, now):
        return replace(run, status=SHOWN_INTERRUPTED, stop_reason=PROCESS_GONE)
    return run


@dataclass
class RunLine:
    """A run as the list of runs shows it: its rows' outcomes per model under test, and what its judges were billed."""

    run: Run
    scored: int = 0
    passed: int = 0
    failed_rows: int = 0  # rows the judge did not score (invalid, error, malformed)
    models: list[str] = field(default_factory=list)
    cost: float = 0.0
    unpriced: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Share of its scored rows that passed (as the run's summary counts them)."""
        return self.passed / self.scored if self.scored else None


def run_lines(store: Store, *, channels: Channels, limit: int, offset: int = 0) -> tuple[list[RunLine], int]:
    """A page of runs the viewer may see, newest first (but those never started: their cost was not agreed to), with
    their figures; and how many there are in all."""
    r = RUN.c
    where = [sa.not_(never_started(r.status, r.stop_reason)), visible(r.channel_id, channels)]
    with store.engine.connect() as conn:
        total = int(conn.execute(select(func.count()).select_from(RUN).where(*where)).scalar_one())
        runs = [Run.read(row) for row in conn.execute(select(RUN).where(*where).order_by(r.id.desc()).limit(limit)
                                                    .offset(offset))]
    now = utcnow()
    lines = {run.id: RunLine(listed(run, now)) for run in runs}
    if not lines:
        return [], total
    j, b = JUDGMENT.c, table_of(BilledTally).c
    ids = sorted(lines)
    outcomes = (select(j.run_id, j.model_name, j.status, j.passed, func.count())
                .where(j.run_id.in_(ids)).group_by(j.run_id, j.model_name, j.status, j.passed))
    billed = select(b.run_id, func.sum(b.cost), func.sum(b.unpriced)).where(b.run_id.in_(ids)).group_by(b.run_id)
    with store.engine.connect() as conn:
        for run_id, model, status, passed, count in conn.execute(outcomes):
            line = lines[run_id]
            if model and model not in line.models:
                line.models.append(model)
            if status == RowState.SCORED:
                line.scored += count
                line.passed += count if passed else 0
            elif status != RowState.PENDING:
                line.failed_rows += count
        for run_id, cost, unpriced in conn.execute(billed):
            lines[run_id].cost, lines[run_id].unpriced = float(cost or 0.0), int(unpriced or 0)
    for line in lines.values():
        line.models.sort()
    return [lines[run.id] for run in runs], total


@dataclass(frozen=True)
class RowFilter:
    """Which rows of a run a page shows: of a model under test, a status, a tag, passed or failed, flagged, holding
    a text; in an order (SORTS)."""

    model: str | None = None
    status: str | None = None
    tag: str | None = None
    outcome: str | None = None  # pass or fail
    flag: str | None = None  # unsure, injection or review
    text: str | None = None
    sort: str = "row"


@dataclass(frozen=True)
class RowFacets:
    """What a run's rows can be filtered by: its models, statuses and tags, with how many rows each, and each model's
    scored and passed rows (model, scored, passed)."""

    models: list[tuple[str | None, int]]
    statuses: list[tuple[str, int]]
    tags: list[tuple[str, int]]
    outcomes: list[tuple[str | None, int, int]] = field(default_factory=list)


def like_pattern(text: str) -> str:
    """A LIKE pattern that finds `text` anywhere, its own % and _ taken literally (escaped with \\)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _row_conditions(run_id: int, wanted: RowFilter, dialect: str) -> list[Any]:
    c = JUDGMENT.c
    where: list[Any] = [c.run_id == run_id]
    if wanted.model is not None:
        where.append(c.model_name.is_(None) if wanted.model == "" else c.model_name == wanted.model)
    if wanted.status:
        where.append(c.status == wanted.status)
    if wanted.tag:
        where.append(c.tag == wanted.tag)
    if wanted.outcome in OUTCOMES:
        where += [c.status == RowState.SCORED, c.passed.is_(wanted.outcome == "pass")]
    if wanted.flag == "unsure":
        where.append(c.unsure.is_(True))
    elif wanted.flag == "injection":
        flags = sa.cast(c.flags, sa.Text)
        where += [c.flags.is_not(None), sa.or_(*(flags.like(words) for words in INJECTION_WORDS))]
    elif wanted.flag == "review":
        where.append(c.id.in_(select(table_of(ReviewCase).c.judgment_id).where(table_of(ReviewCase).c.run_id == run_id)))
    if wanted.text and wanted.text.strip():
        pattern = like_pattern(wanted.text.strip())
        # SQLite's LIKE ignores the case of ASCII letters already; ILIKE there would lower every text first
        match = (lambda column: column.like(pattern, escape="\\")) if dialect == "sqlite" else (
            lambda column: column.ilike(pattern, escape="\\"))
        where.append(sa.or_(*(match(column) for column in (c.question, c.answer, c.reference, c.answer_b, c.context))))
    return where


def run_rows(store: Store, run_id: int, wanted: RowFilter, *, limit: int, offset: int = 0) -> tuple[list[Any], int]:
    """A page of a run's rows as `wanted` filters and sorts them (each with its id, row number, model, status,
    headline, pass/fail, label, tag, flags, unsure and the start of its question), and how many rows match.

    The page's ids are found from the indexes (a search of the texts or the flags reads the run's rows once, the
    count and the page from that one pass), then only the page's rows are read: a page deep into a run of 20,000
    rows reads 50 of them."""
    c = JUDGMENT.c
    where = _row_conditions(run_id, wanted, store.engine.dialect.name)
    order: list[Any] = [c.id]  # a run's rows are saved in the file's order
    if wanted.sort == "headline":
        order = [c.headline.is_(None), c.headline, c.id]
    elif wanted.sort == "-headline":
        order = [c.headline.is_(None), c.headline.desc(), c.id]
    columns = (c.id, c.row_number, c.model_name, c.model_b, c.status, c.headline, c.passed, c.label, c.tag, c.flags,
               c.unsure, func.substr(c.question, 1, QUESTION_SHOWN).label("question"))
    scanned = bool(wanted.text and wanted.text.strip()) or wanted.flag == "injection"  # read row by row: once
    with store.engine.connect() as conn:
        if scanned:
            matching = [id_ for (id_,) in conn.execute(select(c.id).where(*where).order_by(*order))]
            ids, total = matching[offset:offset + limit], len(matching)
        else:
            total = int(conn.execute(select(func.count()).select_from(JUDGMENT).where(*where)).scalar_one())
            ids = [id_ for (id_,) in conn.execute(select(c.id).where(*where).order_by(*order).limit(limit).offset(offset))]
        found = {row.id: row for row in conn.execute(select(*columns).where(c.id.in_(ids)))} if ids else {}
    return [found[id_] for id_ in ids], total


def row_facets(store: Store, run_id: int) -> RowFacets:
    """The models, statuses and tags of a run's rows, each with its count, and each model's scored and passed rows
    (read from one index)."""
    c = JUDGMENT.c
    statement = (select(c.model_name, c.status, c.tag, c.passed, func.count()).where(c.run_id == run_id)
                 .group_by(c.model_name, c.status, c.tag, c.passed))
    models: dict[str | None, int] = {}
    statuses: dict[str, int] = {}
    tags: dict[str, int] = {}
    outcomes: dict[str | None, tuple[int, int]] = {}
    with store.engine.connect() as conn:
        for model, status, tag, passed, count in conn.execute(statement):
            models[model] = models.get(model, 0) + count
            statuses[status] = statuses.get(status, 0) + count
            if tag:
                tags[tag] = tags.get(tag, 0) + count
            if status == RowState.SCORED:
                scored, passing = outcomes.get(model, (0, 0))
                outcomes[model] = (scored + count, passing + (count if passed else 0))
    order = sorted(models, key=lambda model: (model is None, model or ""))
    return RowFacets([(model, models[model]) for model in order], sorted(statuses.items()), sorted(tags.items()),
                     [(model, *outcomes[model]) for model in order if model in outcomes])


def row_channels(store: Store, judgment_ids: Collection[int]) -> dict[int, str | None]:
    """The channel each of these judgments belongs to (None: the terminal's)."""
    c = JUDGMENT.c
    with store.engine.connect() as conn:
        return {id_: channel for id_, channel in conn.execute(select(c.id, c.channel_id).where(c.id.in_(sorted(judgment_ids))))}


@dataclass(frozen=True)
class WeekFigures:
    """One model's week under one rubric: cases counted (each once, with its latest verdict in the week), scored
    ones, passed ones and the mean headline."""

    rows: int = 0
    scored: int = 0
    passed: int = 0
    headline_total: float = 0.0
    headlines: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Share of the scored cases that passed."""
        return self.passed / self.scored if self.scored else None

    @property
    def mean_headline(self) -> float | None:
        """Mean 0-100 headline of the scored cases."""
        return self.headline_total / self.headlines if self.headlines else None


def weekly_figures(store: Store, *, channel_id: str | None, weeks: Sequence[tuple[datetime, datetime]]
                   ) -> dict[tuple[str | None, str], list[WeekFigures]]:
    """Per model under test and rubric, each of `weeks` ([start, end) each) as the counting rule counts it, added up
    from the hourly tallies (as bot.store.reads.weekly.weekly_means): a statement for them all."""
    parts = []
    for index, (start, end) in enumerate(weeks):
        rows = counted_in_channel(channel_id, start, end)
        scored = rows.c.status == RowState.SCORED
        parts.append(select(literal(index).label("week"), rows.c.model_key, rows.c.rubric_name,
                            func.sum(rows.c.rows).label("rows"),
                            func.sum(sa.case((scored, rows.c.rows), else_=0)).label("scored"),
                            func.sum(sa.case((scored, rows.c.passed), else_=0)).label("passed"),
                            func.sum(sa.case((scored, rows.c.headline_total), else_=0.0)).label("total"),
                            func.sum(sa.case((scored, rows.c.headlines), else_=0)).label("headlines"))
                     .where(rows.c.replaced >= end).group_by(rows.c.model_key, rows.c.rubric_name))
    found: dict[tuple[str | None, str], list[WeekFigures]] = {}
    if not parts:
        return found
    with store.session() as session:
        for index, key, rubric, rows_, scored_, passed, total, headlines in session.execute(union_all(*parts)):
            week = WeekFigures(int(rows_ or 0), int(scored_ or 0), int(passed or 0), float(total or 0.0),
                               int(headlines or 0))
            found.setdefault((model_of(key), rubric), [WeekFigures()] * len(weeks))[index] = week
    return found


def queue_channels(store: Store, *, channels: Channels) -> list[tuple[str | None, int]]:
    """The channels (None: the terminal) whose review queues hold open cases the viewer may see, with how many."""
    r = table_of(ReviewCase).c
    statement = (select(r.channel_id, func.count()).where(r.state == OPEN, visible(r.channel_id, channels))
                 .group_by(r.channel_id))
    with store.engine.connect() as conn:
        return sorted(((channel, int(count)) for channel, count in conn.execute(statement)),
                      key=lambda item: (item[0] is not None, item[0] or ""))

