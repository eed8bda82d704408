"""The "Open in judgebot" links of Slack's cards, Details, summaries and digests: to a row, a run or a channel's
trend in the web view, when VIEW_URL says where people open it (none when it is unset)."""

from __future__ import annotations

from urllib.parse import quote

OPEN = "Open in judgebot"


def view_link(view_url: str | None, path: str) -> str:
    """A Slack link to `path` of the view ("" without VIEW_URL)."""
    if not view_url:
        return ""
    return f"<{view_url.rstrip('/')}{path}|{OPEN}>"


def row_link(view_url: str | None, judgment_id: int) -> str:
    """The link to one row (a judgment) whole."""
    return view_link(view_url, f"/rows/{judgment_id}")


def run_link(view_url: str | None, run_id: int) -> str:
    """The link to a run's rows."""
    return view_link(view_url, f"/runs/{run_id}")


def trend_link(view_url: str | None, channel_id: str) -> str:
    """The link to a channel's weekly trend."""
    return view_link(view_url, f"/trend?channel={quote(channel_id, safe='')}")
