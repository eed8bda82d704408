"""views.*: modals and the Home tab, refused as Slack refuses them when they break its limits."""

from __future__ import annotations

import json

from tests.support.slack_server.core import SlackCore

# What Slack refuses in a modal or Home tab (views.open, push, update, publish) with invalid_arguments: more than 100
# blocks, a section text over 3,000 characters, a view much above 250 kB.
VIEW_BLOCKS, VIEW_SECTION_TEXT, VIEW_BYTES = 100, 3000, 250_000


def view_problems(view: dict) -> list[str]:
    """Slack's words for each limit a view breaks."""
    blocks = view.get("blocks") or []
    problems = [] if len(blocks) <= VIEW_BLOCKS else [
        f"[ERROR] no more than {VIEW_BLOCKS} items allowed [json-pointer:/view/blocks]"]
    for index, block in enumerate(blocks):
        text = (block.get("text") or {}).get("text", "") if block.get("type") == "section" else ""
        if len(text) > VIEW_SECTION_TEXT:
            problems.append(f"[ERROR] must be less than {VIEW_SECTION_TEXT + 1} characters "
                            f"[json-pointer:/view/blocks/{index}/text/text]")
    size = len(json.dumps(view, ensure_ascii=False).encode("utf-8"))
    if size > VIEW_BYTES:
        problems.append(f"[ERROR] view is too large ({size:,} bytes) [json-pointer:/view]")
    return problems


class ViewMethods(SlackCore):
    """views.open, views.push, views.update and views.publish."""

    def _view(self, params: dict) -> dict:
        view = params.get("view")
        if not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        if problems := view_problems(view):
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        n = self._next_view_id()
        return {"ok": True, "view": {**view, "id": f"V{n}", "hash": f"h{n}"}}

    def _view_open(self, params: dict) -> dict:
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        return self._view(params)

    def _view_publish(self, params: dict) -> dict:
        if not params.get("user_id"):
            return {"ok": False, "error": "invalid_arguments"}
        return self._view(params)
