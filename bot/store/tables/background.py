"""The background responses of a run (the Responses API's background mode, in a completion window): each request
saved before it is created, its response id as soon as it exists, and how it ended."""

from __future__ import annotations

from pydantic import NaiveDatetime
from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

import bot.store.tables.history  # noqa: F401  (the run and judgment tables its foreign keys name, for a row to be saved)
from bot.store.clock import utcnow


class RunBackground(SQLModel, table=True):
    """One slot of a run (a row, a judge of its panel, a sample) asked in the background: saved as `sending` before the
    request is created, `sent` with its response id once the endpoint gave one (a restart polls it, never sends it
    again), `ended` with the response's last status once its reply is saved or it failed."""

    __tablename__ = "run_background"

    id: int = Field(default=None, primary_key=True)  # None until inserted; every row read back has one
    run_id: int = Field(foreign_key="run.id", index=True)
    judgment_id: int = Field(foreign_key="judgment.id")
    judge_index: int = Field(description="the judge of the run's panel it asks (its index)")
    sample: int = Field(description="the sample number it asks for, from 1")
    completion_window: str = Field(max_length=8, description="the completion window: 2h or 8h")
    boundary: str = Field(max_length=64, description="the boundary its texts were fenced with (asked again on repair)")
    state: str = Field(max_length=16, description="sending (saved, maybe created), sent (its id saved), or ended")
    response_id: str | None = Field(default=None, max_length=128)
    status: str | None = Field(default=None, max_length=32, description="the provider's: queued, in_progress...")
    error: str | None = Field(default=None, sa_column=Column(Text), description="why its row was not judged by it")
    created_at: NaiveDatetime = Field(default_factory=utcnow)
    ended_at: NaiveDatetime | None = None
