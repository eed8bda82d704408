"""Finding a message an earlier try posted without learning so (no answer came, or its process died), within what
Slack allows an app distributed outside its Marketplace (conversations.history: a call a minute, 15 messages a call):
one call over the minutes around that try, matched by the metadata the message carries."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.messenger import slack_error

log = logging.getLogger(__name__)

# From a minute before the earlier try claimed the post to a quarter of an hour after: it posts right after claiming.
LOOK_BEFORE, LOOK_AFTER, LOOK_LIMIT = 60.0, 900.0, 15


async def earlier_post(client: AsyncWebClient, channel: str, since: datetime, event_type: str,
                       matches: Callable[[dict[str, Any]], bool]) -> str | None:
    """The ts of the bot's message in `channel` whose metadata is of `event_type` and whose payload `matches`, posted
    by a try that claimed it at `since` (UTC); None when there is none, or Slack could not be asked (not knowing is
    no reason to skip the post)."""
    at = since.replace(tzinfo=UTC).timestamp()
    try:
        page = await client.conversations_history(channel=channel, oldest=f"{at - LOOK_BEFORE:.6f}",
                                                  latest=f"{at + LOOK_AFTER:.6f}", include_all_metadata=True,
                                                  limit=LOOK_LIMIT)
    except Exception as err:
        log.warning("could not look for an earlier %s in %s (%s)", event_type, channel, slack_error(err))
        return None
    for message in page.get("messages") or []:
        metadata = message.get("metadata") or {}
        if (metadata.get("event_type") == event_type and message.get("bot_id")
                and matches(metadata.get("event_payload") or {})):
            return str(message["ts"])
    return None
