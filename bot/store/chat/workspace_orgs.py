"""Which workspace a channel or workspace belongs to: the Enterprise Grid organisation of each workspace an org-wide
install serves, kept as its requests name it; the workspaces a channel's history and settings name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from bot.store.clock import utcnow
from bot.store.connections import conflict_insert
from bot.store.tables.chat import ChannelSetting
from bot.store.tables.core import RUN
from bot.store.tables.history import table_of
from bot.store.tables.processes import WorkspaceOrg

if TYPE_CHECKING:
    from bot.store.database import Store


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


def channel_teams(store: Store, channel_id: str) -> list[str]:
    """The workspaces whose runs or settings name channel `channel_id` (two for a channel shared by two workspaces
    that both use judgebot), sorted."""
    run, setting = RUN, table_of(ChannelSetting)
    found = sa.union(sa.select(run.c.team_id).where(run.c.channel_id == channel_id, run.c.team_id.is_not(None)),
                     sa.select(setting.c.team_id).where(setting.c.channel_id == channel_id))
    with store.engine.connect() as conn:
        return sorted(team for team in conn.execute(found).scalars() if team)
