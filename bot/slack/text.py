"""Text for Slack: mrkdwn escaping, clean cuts within Block Kit's limits, right-to-left lines, links and dates."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

ELLIPSIS = "…"
RLI, PDI = "\u2067", "\u2069"  # right-to-left isolate and its end


def unescape(text: str) -> str:
    """Undo the escaping Slack applies to &, < and > in what people type."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def escape(text: str) -> str:
    """Make untrusted text literal in mrkdwn: no links, mentions or @channel pings sneak in."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _first_strong(line: str) -> str | None:
    for char in line:
        kind = unicodedata.bidirectional(char)
        if kind in ("L", "R", "AL"):
            return kind
    return None


def bidi(text: str) -> str:
    """Wrap each right-to-left line (Arabic, Hebrew, ...) in an isolate so it reads right to left in any client.

    Slack lays messages out left to right; without the isolate, punctuation and numbers at the
    ends of an Arabic sentence land on the wrong side. The characters themselves are unchanged.
    """
    return "\n".join(f"{RLI}{line}{PDI}" if _first_strong(line) in ("R", "AL") else line for line in text.split("\n"))


def clip(text: str, limit: int) -> tuple[str, bool]:
    """Cut `text` to at most `limit` characters at a word boundary, marked with an ellipsis; (text, was_cut)."""
    if len(text) <= limit:
        return text, False
    cut = text[: max(limit - len(ELLIPSIS), 0)]
    space = cut.rfind(" ", len(cut) * 3 // 4)  # a word boundary if one is near the end, else a hard cut
    return (cut[:space] if space > 0 else cut).rstrip() + ELLIPSIS, True


def shown(text: str, limit: int) -> tuple[str, bool]:
    """Untrusted text as mrkdwn of at most `limit` characters: escaped, cut cleanly, right-to-left safe."""
    budget = min(limit, len(text))
    while budget > 0:
        cut, was_cut = clip(text, budget)
        rendered = bidi(escape(cut))
        if len(rendered) <= limit:
            return rendered, was_cut
        # Escaping and isolates made it longer: shrink the cut in proportion, and by one at least.
        budget = min(budget - 1, budget * limit // len(rendered))
    return "", bool(text)


def pieces(text: str, limit: int) -> list[str]:
    """Untrusted text as mrkdwn pieces of at most `limit` characters each, split at line ends where possible."""
    size = max(limit, 1)
    while True:
        rendered = [bidi(escape(piece)) for piece in chunks(text, size)]
        longest = max(map(len, rendered))
        if longest <= limit or size == 1:
            return rendered
        size = max(1, min(size - 1, size * limit // longest))


def chunks(text: str, size: int) -> list[str]:
    """Split `text` into pieces of at most `size` characters, at line ends where possible."""
    pieces: list[str] = []
    while len(text) > size:
        split = text.rfind("\n", 0, size)
        split = split + 1 if split > size // 2 else size
        pieces.append(text[:split])
        text = text[split:]
    return [*pieces, text] if text or not pieces else pieces


def date(moment: datetime) -> str:
    """A date each reader sees in their own timezone (a UTC fallback for old clients)."""
    stamp = int(moment.replace(tzinfo=UTC).timestamp())
    fallback = moment.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{stamp}^{{date_short_pretty}} {{time}}|{fallback}>"


def permalink(team_url: str | None, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
    """A link to a message, built from the workspace URL that auth.test gives (no API call per link)."""
    if not team_url:
        return None
    link = f"{team_url.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        link += f"?thread_ts={thread_ts}&cid={channel}"
    return link

