"""Where a click came from: the channel and workspace a button or form acts in, checked against what it acts on."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

QUICK_READ = 1.5  # seconds a database read may take before a trigger_id (valid ~3 s) must be used


def clicked_in(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """(channel, team) of a click."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    return channel, (body.get("team") or {}).get("id")


def made_here(body: dict[str, Any], action: dict[str, Any], channel_id: str | None, team_id: str | None) -> bool:
    """Whether what a button acts on was made in the channel, and the workspace, where it was clicked; logs a refusal."""
    channel, team = clicked_in(body)
    if channel_id is not None and channel_id == channel and (not team_id or team == team_id):
        return True
    log.warning("button %s for %r refused in channel %s of team %s", action.get("action_id"), action.get("value"),
                channel, team)
    return False
