"""The App Home tab: the person's recent judgments, the rubrics, and how to use the bot."""

from __future__ import annotations

import logging
from typing import Any

from bot.slack.context import Context
from bot.slack.listeners.clicks import from_team, named_teams
from bot.slack.views.home import HOME_JUDGMENTS, home_view
from bot.store import recent_by_user

log = logging.getLogger(__name__)


class HomeListener:
    """Publishes the Home tab whenever a person opens it."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def on_home_opened(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """The App Home tab was opened: show this person's recent judgments (only theirs, in this workspace)."""
        if event.get("tab") != "home":
            return
        user, team = event["user"], self.ctx.team_id
        if team is None or not from_team(body, team):
            log.warning("App Home of user %s refused for team(s) %s", user, named_teams(body))
            return
        judgments = await self.ctx.db(recent_by_user, team_id=team, user_id=user, limit=HOME_JUDGMENTS)
        warnings = self.ctx.watch.warnings(slack=True)  # the configured judge: a channel's own is named there
        await self.ctx.client.views_publish(user_id=user, view=home_view(self.ctx.rubrics, judgments, self.ctx.team_url,
                                                                         warnings))
