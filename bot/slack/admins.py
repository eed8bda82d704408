"""Who may change a channel's settings (its digest, budget, reviewers, judge, samples, an aligned rubric): the
workspace's admins and owners, and the people the bot's JUDGEBOT_ADMINS setting names."""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.messenger import slack_error

log = logging.getLogger(__name__)

ADMINS_ONLY = "Only the workspace's admins and owners, and the people the bot's JUDGEBOT_ADMINS setting names, can"
CANNOT_CHECK = (
    "I could not check whether you are a workspace admin (`{error}`): the app needs the users:read scope for that. "
    "Ask whoever runs the bot to reinstall it with that scope, or to add your user id to JUDGEBOT_ADMINS."
)


async def admin_refusal(client: AsyncWebClient, admins: frozenset[str], *, user: str, team: str,
                        not_admin: str) -> str | None:
    """Why `user` may not act as an admin in workspace `team` (`not_admin`, or that it could not be checked); None if
    they may.

    In a channel shared with another organisation (Slack Connect), its admins are admins of their own workspace, not
    of this one: they are refused like anyone else.
    """
    if user in admins:
        return None
    try:
        found = (await client.users_info(user=user)).get("user") or {}
    except Exception as err:
        log.warning("users.info of %s failed: %s", user, slack_error(err))
        return CANNOT_CHECK.format(error=slack_error(err))
    ours = found.get("team_id") in (None, team) or team in (found.get("enterprise_user") or {}).get("teams", [])
    if ours and (found.get("is_admin") or found.get("is_owner") or found.get("is_primary_owner")):
        return None
    return not_admin
