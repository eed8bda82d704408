"""The Enterprise Grid organisation of each workspace an org-wide install serves, kept as its requests name it."""

from __future__ import annotations

import sqlalchemy as sa

from bot.store.engine import conflict_insert
from bot.store.judgments import Store
from bot.store.models import table_of, utcnow
from bot.store.models_replicas import WorkspaceOrg


def remember_org(store: Store, *, team_id: str, enterprise_id: str) -> None:
    """Workspace `team_id` is part of organisation `enterprise_id` (the latest request's word wins)."""
    table = table_of(WorkspaceOrg)
    statement = conflict_insert(store.engine.dialect.name)(table).values(team_id=team_id[:32],
                                                                         enterprise_id=enterprise_id[:32],
                                                                         updated_at=utcnow())
    with store.engine.begin() as conn:
        conn.execute(statement.on_conflict_do_update(index_elements=[table.c.team_id],
                                                     set_={"enterprise_id": statement.excluded.enterprise_id,
                                                           "updated_at": statement.excluded.updated_at}))


def org_of(store: Store, team_id: str) -> str | None:
    """The organisation workspace `team_id` is part of, if a request of it ever said."""
    table = table_of(WorkspaceOrg)
    with store.engine.connect() as conn:
        return conn.execute(sa.select(table.c.enterprise_id).where(table.c.team_id == team_id)).scalar_one_or_none()
