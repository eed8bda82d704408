"""Forms as Slack submits them: a modal the bot opened, filled in and sent back as a view_submission."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from tests.support.slack_side import TEAM, SlackSide


def inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """label -> input block of a form."""
    return {block["label"]["text"]: block for block in view["blocks"] if block["type"] == "input"}


async def submit_form(slack: SlackSide, view: dict[str, Any], changes: dict[str, str] | None = None, *,
                      note: str | None = None, user: str = "U0USER", team: str = TEAM,
                      metadata: str | None = None) -> Any:
    """Submit the Correct it form as the person left it: each field's initial value unless `changes` names it (by
    label: an option's text, or what was typed; text no option has goes as the option's value, as a forged form)."""
    values: dict[str, Any] = {}
    for label, block in inputs(view).items():
        element = block["element"]
        if element["type"] == "static_select":
            wanted = (changes or {}).get(label)
            if wanted is None:
                option = element.get("initial_option")
            else:
                option = next((o for o in element["options"] if o["text"]["text"] == wanted),
                              {"text": {"type": "plain_text", "text": wanted}, "value": wanted})
            values[block["block_id"]] = {"value": {"type": "static_select", "selected_option": option}}
        else:
            typed = note if block["block_id"] == "note" else (changes or {}).get(label, element.get("initial_value"))
            values[block["block_id"]] = {"value": {"type": "plain_text_input", "value": typed}}
    payload = {"type": "view_submission", "team": {"id": team, "domain": "judgebot-test"},
               "user": {"id": user, "team_id": team}, "api_app_id": "A0TEST", "token": "legacy",
               "trigger_id": "trigger.form", "view": {**view, "id": "V0FIX", "state": {"values": values},
                                                      "private_metadata": metadata or view["private_metadata"]}}
    return await slack.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
