"""Tests for retrieved context in the history, on SQLite and PostgreSQL: the same texts with other passages are
another case to labels, votes and the review queue, the same passages the same case; rows without context keep the
keys they had, and a history upgraded to schema 30 (passages) or 36 (each row's passages kept once) moves no
figure."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlalchemy as sa

from bot.csvfiles.passages import input_cells
from bot.records import Verdict, context_text
from bot.store import (
    LATEST,
    Judgment,
    Store,
    add_rows,
    case_key,
    channel_stats,
    counted_case,
    create_run,
    get_judgment,
    iter_judgments,
    judgment_case,
    labels_of,
    open_cases,
    record_feedback,
    save_label,
    save_verdict,
)
from bot.trust.cases import labeled_verdicts
from bot.trust.review import send_to_review

COMMON = {"rubric_name": "in-passages", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}
MENSA, LIBRARY = "The Mensa opens at 11:00.", "The library closes at 22:00."


def verdict(passed: bool = True, *, unsure: bool | None = None) -> Verdict:
    tag = "good" if passed else "bad"
    return Verdict(status="scored", output={"score": 2 if passed else 0, "verdict": tag, "why": "w"},
                   headline=100.0 if passed else 0.0, passed=passed, label=tag, tag=tag, raw_reply="{}",
                   prompt_hash="p" * 32, unsure=unsure, samples=None if unsure is None else 3, **COMMON)


def judged(store: Store, contexts: list[list[str] | None], *, unsure: bool | None = None) -> list[Judgment]:
    """A run in channel C1 of one row per entry of `contexts`, each the same question, reference and answer with
    those passages, scored."""
    run = create_run(store, **COMMON, channel_id="C1", team_id="T1")
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": "When?",
                      "reference": "At 11.", "answer": "At 11.", "channel_id": "C1", "team_id": "T1",
                      "model_name": "bot", "context": context_text(context)} for n, context in enumerate(contexts, 1)])
    rows = list(iter_judgments(store, run.id))
    for row in rows:
        assert save_verdict(store, row.id, verdict(unsure=unsure), cache_key=f"k{row.id}")
    return [get_judgment(store, row.id) for row in rows]  # type: ignore[misc]


def correct(store: Store, judgment: Judgment, user: str = "U1") -> bool:
    return save_label(store, judgment=judgment, user_id=user, source="correction",
                      values={"score": 0, "verdict": "bad"}, passed=False, pass_from="rule", tag="bad", headline=None,
                      note=None)


def test_rows_without_context_keep_their_keys_and_passages_make_another_case() -> None:
    texts = ("T1", "C1", "eth", "When?", "At 11.", "At 11.")
    before = hashlib.sha256("\x1f".join(texts).encode("utf-8")).hexdigest()  # the key as it was before context
    assert case_key(*texts) == case_key(*texts, context=None) == before
    one, other = case_key(*texts, context=context_text([MENSA])), case_key(*texts, context=context_text([LIBRARY]))
    assert len({before, one, other}) == 3
    assert case_key(*texts, context=context_text([])) not in {before, one, other}  # none retrieved: a case too
    assert case_key(*texts, context=context_text([MENSA, LIBRARY])) != case_key(*texts,
                                                                             context=context_text([LIBRARY, MENSA]))
    assert counted_case(one, "bot") != counted_case(before, "bot") != counted_case(other, "bot")


def test_labels_and_votes_of_the_same_texts_with_other_passages_are_of_another_case(store: Store) -> None:
    mensa, library = judged(store, [[MENSA], [LIBRARY]])
    [again] = judged(store, [[MENSA]])  # the first case judged in another run
    assert correct(store, mensa) is False
    assert correct(store, library) is False  # another case: it replaces nothing
    assert correct(store, again) is True  # the same case: it replaces U1's label of it
    assert labels_of(store, mensa.id) == [] and len(labels_of(store, library.id)) == len(labels_of(store, again.id)) == 1
    assert len(labeled_verdicts(store, rubric_name="in-passages", channel_id="C1")) == 2
    record_feedback(store, judgment_id=library.id, user_id="U2", agree=True)
    record_feedback(store, judgment_id=mensa.id, user_id="U2", agree=False)
    assert len(labeled_verdicts(store, rubric_name="in-passages", channel_id="C1")) == 4  # U1 and U2, on each case


def test_the_review_queue_holds_each_context_as_its_own_case_once(store: Store) -> None:
    runs = judged(store, [[MENSA], [LIBRARY], [MENSA]], unsure=True)
    run = store_run(store, runs[0])
    sent = send_to_review(store, run, rate=0.0)
    assert sent.by_reason == {"unsure": 2}  # two cases: the third row is the first one's case
    [again] = judged(store, [[LIBRARY]], unsure=True)
    assert send_to_review(store, store_run(store, again), rate=0.0).total == 0  # queued already
    assert len(open_cases(store, team_id="T1", channel_id="C1")) == 2


def store_run(store: Store, judgment: Judgment) -> Any:
    from bot.store import get_run

    return get_run(store, judgment.run_id)


def test_upgrading_to_version_30_keeps_every_key_and_figure(db_url: str) -> None:
    store = Store.open(db_url)
    try:  # a history judged before context existed: the rows of schema 29, the column taken away again
        [first, second] = judged(store, [None, None])
        run = create_run(store, **COMMON, channel_id="C1", team_id="T1")
        add_rows(store, [{**COMMON, "run_id": run.id, "row_number": 1, "status": "pending", "question": "Other?",
                          "reference": "r", "answer": "a", "channel_id": "C1", "team_id": "T1", "model_name": "bot"}])
        [other] = iter_judgments(store, run.id)
        assert save_verdict(store, other.id, verdict(False), cache_key="k-other")
        [before] = channel_stats(store, channel_id="C1")
        keys = _keys(store)
        with store.engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE judgment DROP COLUMN context"))
            for table in ("judgment", "judgment_sample", "billed_tally"):  # and what came after 30
                conn.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN tokens_reasoning"))
            for table in ("judgment", "judgment_sample", "channel_judge"):  # schema 33's
                conn.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN reasoning_effort"))
            for later in ("model_list_read", "listed_shutdown", "run_background"):  # schemas 32 and 34's tables, made
                # again by their migrations
                conn.execute(sa.text(f"DROP TABLE {later}"))
            conn.execute(sa.text("DROP INDEX ix_judgment_run_browse"))  # schema 35's, made again by its migration
            conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 30"))
    finally:
        store.engine.dispose()
    assert first.case_hash == second.case_hash == counted_case(
        case_key("T1", "C1", "in-passages", "When?", "At 11.", "At 11."), "bot")  # the key as it was before context

    store = Store.open(db_url)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT MAX(version) FROM schema_version")).scalar() == LATEST
        assert _keys(store) == keys  # every case, cache key and prompt hash as it was, and no context
        [after] = channel_stats(store, channel_id="C1")
        assert after == before and (after.cases, after.scored, after.mean_headline) == (2, 2, 50.0)
        # judged again without context: the same case, its verdict replaced; with passages: a case more
        judged(store, [None, [MENSA]])
        [again] = channel_stats(store, channel_id="C1")
        assert (again.cases, again.scored, again.mean_headline) == (3, 3, 200.0 / 3)
    finally:
        store.engine.dispose()


def test_upgrading_to_version_36_keeps_each_rows_passages_once_and_moves_no_figure(db_url: str) -> None:
    # A history of schema 35 (whose tables 36 leaves as they are): each context cell a second copy of the passages.
    ascii_form = json.dumps([MENSA, "Caf\u00e9 Bellevue"])
    cells = {1: context_text([LIBRARY, MENSA]), 2: ascii_form, 3: '[ "The Mensa opens at 11:00." ]', 4: MENSA}
    contexts = {1: [LIBRARY, MENSA], 2: [MENSA, "Café Bellevue"], 3: [MENSA], 4: [MENSA]}
    store = Store.open(db_url)
    try:
        run = create_run(store, **COMMON, channel_id="C1", team_id="T1", source_name="rag.csv",
                         column_roles={"question": "question", "context": "contexts"})
        add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": f"Q{n}?",
                          "reference": "At 11.", "answer": "At 11.", "channel_id": "C1", "team_id": "T1",
                          "model_name": "bot", "cells": {"question": f"Q{n}?", "contexts": cells[n]},
                          "context": context_text(contexts[n])} for n in cells])
        one = create_run(store, **COMMON, channel_id="C1", team_id="T1", source_name="one triple")
        add_rows(store, [{**COMMON, "run_id": one.id, "row_number": 1, "status": "pending", "question": "Q1?",
                          "reference": "At 11.", "answer": "At 11.", "channel_id": "C1", "team_id": "T1",
                          "model_name": "bot", "cells": {"question": "Q1?", "context": context_text([MENSA])},
                          "context": context_text([MENSA])}])
        rows = [*iter_judgments(store, run.id), *iter_judgments(store, one.id)]
        for n, row in enumerate(rows):
            assert save_verdict(store, row.id, verdict(passed=n % 2 == 0), cache_key=f"k{row.id}")
        record_feedback(store, judgment_id=rows[1].id, user_id="U1", agree=False)
        correct(store, get_judgment(store, rows[0].id))  # type: ignore[arg-type]
        before = (channel_stats(store, channel_id="C1"), _keys(store), _cases(store, rows))
        assert [bool(labels) for _, _, labels in before[2]] == [True, False, False, False, False]
        read_back = [input_cells(row.cells, row.context) for row in rows]
        with store.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 36"))
    finally:
        store.engine.dispose()

    store = Store.open(db_url)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT MAX(version) FROM schema_version")).scalar() == LATEST
        after = [get_judgment(store, row.id) for row in rows]
        assert [row.cells for row in after] == [  # type: ignore[union-attr]
            {"question": "Q1?", "contexts": {"passages": "json"}}, {"question": "Q2?", "contexts": {"passages": "json-ascii"}},
            {"question": "Q3?", "contexts": cells[3]},  # spaced its own way: kept as it is
            {"question": "Q4?", "contexts": {"passages": "text"}}, {"question": "Q1?", "context": {"passages": "json"}}]
        assert [input_cells(row.cells, row.context) for row in after] == read_back  # type: ignore[union-attr]
        assert (channel_stats(store, channel_id="C1"), _keys(store), _cases(store, rows)) == before
        [figures] = before[0]
        assert (figures.cases, figures.scored, figures.mean_headline) == (5, 5, 60.0)
    finally:
        store.engine.dispose()


def _cases(store: Store, rows: list[Judgment]) -> list[Any]:
    """Each row's case, and the labels and votes a case holds."""
    found = [get_judgment(store, row.id) for row in rows]
    return [(judgment_case(row), row.case_hash, [(label.case_key, label.values, label.passed)
                                                 for label in labels_of(store, row.id)])
            for row in found if row is not None]


def _keys(store: Store) -> list[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(
            "SELECT id, case_hash, cache_key, prompt_hash, context FROM judgment ORDER BY id"))]
