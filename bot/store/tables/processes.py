"""The tables several processes on one database share besides the history: the judge endpoints' pauses, the
Enterprise Grid organisation each workspace is part of, the workflow steps waiting for their judgment, the cards
being judged again, and the shutdown dates the judge endpoints' model lists gave."""

from __future__ import annotations

from datetime import date

from pydantic import NaiveDatetime
from sqlalchemy import Column, ForeignKey, Integer
from sqlmodel import Field, SQLModel

import bot.store.tables.history  # noqa: F401  (the run and judgment tables its foreign keys name, for a row to be saved)
from bot.store.clock import utcnow


class EndpointPauseTable(SQLModel, table=True):
    """Until when a judge endpoint refuses a model's requests (a 429's wait), as one process learned it: every
    process judging with that endpoint and model holds its requests until then too."""

    __tablename__ = "endpoint_pause"

    endpoint: str = Field(primary_key=True, max_length=255, description="the endpoint's base URL")
    model: str = Field(primary_key=True, max_length=128)
    until: NaiveDatetime = Field(description="UTC: when requests may go again")
    kind: str = Field(max_length=16, description="the limit it waits for: requests or tokens")
    told_by: str = Field(max_length=128, description="host:pid:incarnation of the process that learned it")
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class WorkspaceOrg(SQLModel, table=True):
    """The Enterprise Grid organisation a workspace belongs to, as its requests said: an org-wide install's bot token is
    found by the organisation, so work no request started (a digest) needs it to act in that workspace."""

    __tablename__ = "workspace_org"

    team_id: str = Field(primary_key=True, max_length=32)
    enterprise_id: str = Field(max_length=32)
    updated_at: NaiveDatetime = Field(default_factory=utcnow)


class WorkflowStep(SQLModel, table=True):
    """A Workflow Builder step being judged: what completes it after a restart, until Slack's token for it lapses
    (15 minutes after the step started, or once it is completed). Deleted when completed or failed, or lapsed."""

    __tablename__ = "workflow_step"

    execution_id: str = Field(primary_key=True, max_length=64, description="Slack's function_execution_id")
    team_id: str = Field(max_length=32)
    channel_id: str = Field(max_length=32)
    token: str = Field(max_length=255, repr=False,
                       description="the step's own token (xwfp-...), good only for this execution")
    run_id: int | None = Field(default=None, sa_column=Column(Integer, ForeignKey("run.id"), index=True))
    expires_at: NaiveDatetime = Field(description="UTC: when Slack's token for the step lapses")
    created_at: NaiveDatetime = Field(default_factory=utcnow)


class Rejudge(SQLModel, table=True):
    """A card judged again (its Re-judge, or the Retry of an error card), claimed once by the first click on any
    process: the others are told it is being judged again, or was. Kept with the run that judges it once saved;
    given up when nothing was shown, so that the next click can try again."""

    __tablename__ = "rejudge"

    judgment_id: int = Field(sa_column=Column(Integer, ForeignKey("judgment.id"), primary_key=True, autoincrement=False),
                             description="the judgment whose card was clicked")
    run_id: int | None = Field(default=None, sa_column=Column(Integer, ForeignKey("run.id"), index=True),
                               description="the run judging it again, once saved")
    owner: str = Field(max_length=128, description="host:pid:incarnation of the process judging it again")
    claimed_at: NaiveDatetime = Field(default_factory=utcnow)


class ModelListRead(SQLModel, table=True):
    """When a judge endpoint's model list (GET /models) was last read for its models' shutdown dates, by any process:
    read again once a day, whatever it gave (dates, none, an error)."""

    __tablename__ = "model_list_read"

    endpoint: str = Field(primary_key=True, max_length=255, description="the endpoint's base URL")
    read_at: NaiveDatetime = Field(description="UTC: when it was read")


class ListedShutdown(SQLModel, table=True):
    """A shutdown date a judge endpoint's model list gave a model when it was last read (models it gave none are not
    kept)."""

    __tablename__ = "listed_shutdown"

    endpoint: str = Field(primary_key=True, max_length=255, description="the endpoint's base URL")
    model: str = Field(primary_key=True, max_length=128, description="the model's id in the list, in lower case")
    shutdown_date: date = Field(description="the day the list says the model stops answering")
    read_at: NaiveDatetime = Field(description="UTC: when the list was read")
