"""The shared vocabulary: the verdict's fields are the history's columns, and the state groups name real states."""

from __future__ import annotations

from bot.records import (
    CLAIMABLE,
    JUDGED,
    JUDGED_FIELDS,
    REJUDGEABLE,
    RESUMABLE,
    UNSCORED,
    VERDICT_FIELDS,
    RowState,
    RunState,
    Verdict,
)
from bot.store import table_of
from bot.store.tables.history import JudgmentTable  # the table model: these tests read the history's rows


def test_every_verdict_field_is_a_column_of_a_judgment():
    columns = set(table_of(JudgmentTable).c.keys())
    assert set(VERDICT_FIELDS) <= columns, set(VERDICT_FIELDS) - columns


def test_what_a_judgment_adds_is_part_of_the_verdict_and_not_who_judged():
    assert set(JUDGED_FIELDS) <= set(VERDICT_FIELDS)
    assert not set(JUDGED_FIELDS) & {"status", "rubric_name", "rubric_version", "rubric_hash", "judge_model",
                                     "prompt_hash"}
    optional = {name for name, field in Verdict.model_fields.items() if not field.is_required()}
    assert set(JUDGED_FIELDS) <= optional  # a failure has none of them


def test_state_groups():
    assert set(RESUMABLE) < set(CLAIMABLE) <= set(RunState)
    assert RunState.LOADING not in CLAIMABLE and RunState.FAILED not in CLAIMABLE
    assert set(JUDGED) == {RowState.SCORED, *REJUDGEABLE} and RowState.PENDING not in JUDGED
    assert set(UNSCORED) == {*REJUDGEABLE, RowState.MALFORMED}
    assert all(state == state.value for state in RowState)  # the columns hold the plain strings
