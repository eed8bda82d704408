"""Text for Slack: untrusted text made literal and safe, clean cuts within Block Kit's limits, links and dates."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime

ELLIPSIS = "…"
# The isolates (left to right, right to left, first strong) and their end.
LRI, RLI, FSI, PDI = "\u2066", "\u2067", "\u2068", "\u2069"
# Right-to-left letters and numbers, and the controls that embed, override or isolate a direction.
BIDI = {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
UNSENDABLE = re.compile("[\x00\ud800-\udfff]")  # NUL, and surrogates (in a str, always lone ones)
FENCE = re.compile("`{3,}")
MARKDOWN_MARKS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:/\"'=^$%?,@])")  # ASCII punctuation but & ; < >: entities
ZWSP = "\u200b"
# Paragraph separators (bidi class B): each ends every isolate and override open before it, so each paragraph is
# isolated on its own, or an override after a U+2029 would reverse the bot's text that follows.
PARAGRAPHS = re.compile("([\n\r\x1c-\x1e\x85\u2029])")


def unescape(text: str) -> str:
    """Undo the escaping Slack applies to &, < and > in what people type."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def clean(text: str) -> str:
    """Text without what no database or Slack takes: NUL characters and lone surrogates."""
    return UNSENDABLE.sub("", text)


def escape(text: str) -> str:
    """Make untrusted text literal in mrkdwn: no links, mentions or @channel pings sneak in, no code block opens or
    closes, and no direction control reorders the bot's own text around it."""
    text = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return bidi(FENCE.sub(lambda fence: ZWSP.join(fence.group()), text))


def literal_markdown(text: str) -> str:
    """Make untrusted text literal in a `markdown` block: every punctuation mark that standard markdown could read
    (links, images, emphasis, headings, lists, code, tables) escaped with a backslash, and <, > and & as entities, so
    that no link, mention or @channel ping sneaks in; right-to-left text isolated as in mrkdwn."""
    text = MARKDOWN_MARKS.sub(r"\\\1", clean(text))
    return bidi(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def shown_markdown(text: str, limit: int) -> tuple[str, bool]:
    """Untrusted text for a `markdown` block, of at most `limit` characters: literal, cut cleanly."""
    return _fitted(text, limit, literal_markdown)


def code_block(mrkdwn: str) -> str:
    """Escaped text as a code block: a backtick at either end of it cannot lengthen (and so undo) a fence."""
    before = ZWSP if mrkdwn.startswith("`") else ""
    after = ZWSP if mrkdwn.endswith("`") else ""
    return f"```{before}{mrkdwn}{after}```"


def _first_strong(line: str) -> str | None:
    for char in line:
        kind = unicodedata.bidirectional(char)
        if kind in ("L", "R", "AL"):
            return kind
    return None


def _balanced(line: str) -> str:
    """`line` without the isolate ends that close nothing, and with those it leaves open closed."""
    kept, depth = [], 0
    for char in line:
        if char == PDI:
            if not depth:
                continue
            depth -= 1
        elif char in (LRI, RLI, FSI):
            depth += 1
        kept.append(char)
    return "".join(kept) + PDI * depth


def _isolated(line: str) -> str:
    if not {unicodedata.bidirectional(char) for char in line} & BIDI:
        return line
    return f"{RLI if _first_strong(line) in ('R', 'AL') else FSI}{_balanced(line)}{PDI}"


def bidi(text: str) -> str:
    """Wrap each line (each paragraph: newline, CR, U+2029 and the other paragraph separators end one) holding
    right-to-left text or direction controls in an isolate of its own.

    Slack lays messages out left to right; without the isolate, punctuation and numbers at the ends of an Arabic
    sentence land on the wrong side, and an override (U+202E) left open reverses the bot's text after it. The
    isolate ends every embedding and override inside it; an end of isolate that would close ours is dropped.
    """
    return "".join(part if PARAGRAPHS.fullmatch(part) else _isolated(part) for part in PARAGRAPHS.split(text))


def plain(text: str, limit: int) -> str:
    """Untrusted text for a plain_text field (never parsed for mentions) of at most `limit` characters."""
    return _fitted(text, limit, lambda cut: bidi(clean(cut)))[0]


def clip(text: str, limit: int) -> tuple[str, bool]:
    """Cut `text` to at most `limit` characters at a word boundary, marked with an ellipsis; (text, was_cut)."""
    if len(text) <= limit:
        return text, False
    cut = text[: max(limit - len(ELLIPSIS), 0)]
    space = cut.rfind(" ", len(cut) * 3 // 4)  # a word boundary if one is near the end, else a hard cut
    return (cut[:space] if space > 0 else cut).rstrip() + ELLIPSIS, True


def shown(text: str, limit: int) -> tuple[str, bool]:
    """Untrusted text as mrkdwn of at most `limit` characters: escaped, cut cleanly, right-to-left safe."""
    return _fitted(text, limit, escape)


def _fitted(text: str, limit: int, render: Callable[[str], str]) -> tuple[str, bool]:
    budget = min(limit, len(text))
    while budget > 0:
        cut, was_cut = clip(text, budget)
        rendered = render(cut)
        if len(rendered) <= limit:
            return rendered, was_cut
        # Escaping and isolates made it longer: shrink the cut in proportion, and by one at least.
        budget = min(budget - 1, budget * limit // len(rendered))
    return "", bool(text)


def pieces(text: str, limit: int) -> list[str]:
    """Untrusted text as mrkdwn pieces of at most `limit` characters each, split at line ends where possible."""
    size = max(limit, 1)
    while True:
        rendered = [escape(piece) for piece in chunks(text, size)]
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

