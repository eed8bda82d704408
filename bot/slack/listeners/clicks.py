"""Where a request came from: the workspace and channel of a command, button or form, checked against what it acts on."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

QUICK_READ = 1.5  # seconds a database read may take before a trigger_id (valid ~3 s) must be used
OTHER_WORKSPACE = (
    "judgebot works for the people of the workspace it is installed in, and this came from another workspace (a "
    "channel shared with another organisation), so I cannot act on it here."
)


def teams_of(body: dict[str, Any]) -> set[str]:
    """Every workspace a request names: where it was made (`team`, `team_id`) and the person's own (`user.team_id`)."""
    user = body.get("user")
    named = ((body.get("team") or {}).get("id"), body.get("team_id"),
             user.get("team_id") if isinstance(user, dict) else None)
    return {team for team in named if team}


def named_teams(body: dict[str, Any]) -> str:
    """The workspaces a request names, for a log line."""
    return ", ".join(sorted(teams_of(body))) or "none"


def from_team(body: dict[str, Any], team_id: str | None) -> bool:
    """Whether a request comes from workspace `team_id` only: it names a workspace, and none but that one.

    The rule for every command, button and form: it acts only on what was made in its workspace (and channel). In a
    channel shared with another organisation (Slack Connect), a person of that organisation names their own
    workspace: refused, so nothing of this workspace's history is shown to them or changed by them.
    """
    return bool(team_id) and teams_of(body) == {team_id}


def clicked_in(body: dict[str, Any]) -> str | None:
    """The channel of a click."""
    return (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")


def made_here(body: dict[str, Any], action: dict[str, Any], channel_id: str | None, team_id: str | None) -> bool:
    """Whether what a button acts on was made in the channel, and the workspace, where it was clicked; logs a refusal."""
    channel = clicked_in(body)
    if channel_id and channel_id == channel and from_team(body, team_id):
        return True
    log.warning("button %s for %r refused in channel %s of team(s) %s", action.get("action_id"), action.get("value"),
                channel, named_teams(body))
    return False
