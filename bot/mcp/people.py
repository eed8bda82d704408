"""The Slack person Slackbot calls a tool for, as a caller: their workspace must have judgebot installed; their grades
belong to their direct conversation with judgebot; they read that conversation and the channels they are in."""

from __future__ import annotations

from typing import Protocol

from bot.errors import UsageError
from bot.mcp.gate import SlackPerson, SlackSignature
from bot.mcp.tools import Caller


class SlackReach(SlackSignature, Protocol):
    """What Slack says of a person, through judgebot's bot token in their workspace."""

    async def reach(self, person: SlackPerson) -> tuple[str, frozenset[str]]:
        """The person's direct conversation with judgebot, and the conversations they are in; UsageError when
        judgebot is not installed in their workspace or Slack does not answer."""
        ...


async def slack_caller(reach: SlackReach, person: SlackPerson | None) -> Caller:
    """The caller Slackbot calls for (UsageError when the signed request names nobody, or no workspace)."""
    if person is None:
        raise UsageError("Slackbot did not say who is asking: judgebot answers a Slack person's tool calls only with "
                         "Slack identity auth (auth_type slack_identity_auth in the app's manifest)")
    if person.team_id is None:
        raise UsageError("Slack did not say which workspace you are asking from: ask again from a workspace where "
                         "judgebot is installed")
    home, channels = await reach.reach(person)
    return Caller(name=f"slack:{person.team_id}:{person.user_id}", channels=channels | {home}, home=home,
                  team_id=person.team_id, user_id=person.user_id,
                  why_not="you may read the figures of the conversations you are in, in your own workspace")
