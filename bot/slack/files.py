"""Files in Slack: which shared files are tables, downloading them safely, uploading results into a thread."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import proxy_bypass

import aiohttp
from slack_sdk.proxy_env_variable_loader import load_http_proxy_from_env
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import FileProblem

# Where Slack serves the bytes of shared files (commercial, GovSlack and Enterprise Grid). The bot token
# goes to these hosts only, and to the host of SLACK_API_URL when that setting names another one.
SLACK_FILE_HOSTS = frozenset({"files.slack.com", "files-origin.slack.com", "files.slack-gov.com"})
TABLE_TYPES = frozenset({"csv", "tsv"})
TABLE_SUFFIXES = (".csv", ".tsv")
CHUNK = 1 << 16
HEAD_BYTES = 1024
HTML_START = re.compile(rb"^\s*(<!doctype html|<html)", re.IGNORECASE)
SIGN_IN_PAGE = (
    "Slack answered with a sign-in page instead of the file. Most often the app is missing the `files:read` "
    "permission: an admin adds the `files:read` scope on the app's OAuth & Permissions page and reinstalls the app. "
    "It also happens when the app is not a member of the channel the file was shared in (invite it with `/invite`), "
    "and with a file from another workspace (a Slack Connect channel) or an external file (Google Drive, Dropbox): "
    "upload the CSV itself to this workspace. Then share the file again."
)


@dataclass(frozen=True)
class Downloaded:
    """A file fetched to disk: where, how many bytes, and their SHA-256 (to know the same file shared again)."""

    path: Path
    size: int
    sha256: str


def is_table(file: dict[str, Any]) -> bool:
    """Whether a shared file is a CSV or TSV (by Slack's file type, or by the name's extension)."""
    return (file.get("filetype") or "").lower() in TABLE_TYPES or \
        str(file.get("name") or "").lower().endswith(TABLE_SUFFIXES)


def safe_name(name: str) -> str:
    """A file name that is safe on any disk, keeping what a person recognises."""
    cleaned = re.sub(r"[^\w.\- ]+", "_", Path(name).name).strip(" .") or "file.csv"
    return cleaned[:120]


def file_origin(api_url: str) -> tuple[str, str] | None:
    """(scheme, host:port) of SLACK_API_URL, when it is not Slack's own: files may then be served from there."""
    parts = urlsplit(api_url)
    host = parts.hostname or ""
    if host == "slack.com" or host.endswith(".slack.com"):
        return None
    return parts.scheme, parts.netloc


def check_url(url: str, extra: tuple[str, str] | None) -> None:
    """FileProblem unless `url` is on Slack's file hosts (https) or on the extra (scheme, host:port)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = urlsplit(""), -1
    plain = parts.username is None and parts.password is None  # no credentials of its own in the address
    if plain and parts.scheme == "https" and parts.hostname in SLACK_FILE_HOSTS and port in (None, 443):
        return
    if plain and extra is not None and (parts.scheme, parts.netloc) == extra:
        return
    raise FileProblem(f"its download address is not on Slack's file servers (`{parts.hostname or url[:60]}`), "
                      "so I did not fetch it. Upload the file to Slack itself and share it again.")


def proxy_for(url: str) -> str | None:
    """The proxy a download goes through: the one slack_sdk's own client takes from HTTPS_PROXY (or HTTP_PROXY),
    unless NO_PROXY names the file's host."""
    if proxy_bypass(urlsplit(url).hostname or ""):
        return None
    return load_http_proxy_from_env()


def megabytes(size: int) -> str:
    """A size for people: MB with one decimal, or kB below a megabyte."""
    return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{size / 1000:.0f} kB"


async def download(url: str, token: str, dest: Path, *, max_bytes: int, extra: tuple[str, str] | None) -> Downloaded:
    """Fetch `url` with the bot token into `dest`, refusing other hosts, redirects, sign-in pages and big files."""
    check_url(url, extra)
    timeout = aiohttp.ClientTimeout(total=600, sock_connect=30, sock_read=60)
    digest, size = hashlib.sha256(), 0
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(
            url, headers={"Authorization": f"Bearer {token}"}, allow_redirects=False, proxy=proxy_for(url),
        ) as response:
            _check_response(response, max_bytes)
            head = b""  # the first bytes, to tell a sign-in page from a file whatever the content type said
            with dest.open("wb") as out:
                async for chunk in response.content.iter_chunked(CHUNK):
                    if len(head) < HEAD_BYTES:
                        head += chunk[:HEAD_BYTES]
                        _check_head(head)
                    size += len(chunk)
                    if size > max_bytes:
                        raise FileProblem(f"it is larger than the limit of {megabytes(max_bytes)}. Split it into "
                                          "smaller files and share them one by one.")
                    digest.update(chunk)
                    out.write(chunk)
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as err:
        raise FileProblem(f"it could not be downloaded ({type(err).__name__}). Please share it again.") from None
    return Downloaded(dest, size, digest.hexdigest())


def _check_head(head: bytes) -> None:
    if HTML_START.match(head.removeprefix(b"\xef\xbb\xbf")):
        raise FileProblem(SIGN_IN_PAGE)


def _check_response(response: aiohttp.ClientResponse, max_bytes: int) -> None:
    if 300 <= response.status < 400:
        where = urlsplit(response.headers.get("Location", "")).netloc or "elsewhere"
        raise FileProblem(f"Slack sent the download on to `{where}`; I do not follow redirects with the bot's token. "
                          "This usually means the app lacks the `files:read` permission: an admin adds that scope "
                          "on the app's OAuth & Permissions page and reinstalls the app.")
    if response.status in (401, 403):
        raise FileProblem(SIGN_IN_PAGE)
    if response.status == 404:
        raise FileProblem("it is gone from Slack (deleted?). Share it again.")
    if response.status != 200:
        raise FileProblem(f"Slack answered {response.status} to the download. Please share the file again.")
    if response.content_type == "text/html":
        raise FileProblem(SIGN_IN_PAGE)
    if response.content_length is not None and response.content_length > max_bytes:
        raise FileProblem(f"it has {megabytes(response.content_length)}, more than the limit of {megabytes(max_bytes)}. "
                          "Split it into smaller files and share them one by one.")


async def upload(client: AsyncWebClient, *, channel: str, thread_ts: str, comment: str,
                 files: list[tuple[str, str, bytes]]) -> list[str]:
    """Upload (file name, title, bytes) files as one message in a thread; return the names Slack got."""
    sent = await client.files_upload_v2(
        channel=channel, thread_ts=thread_ts, initial_comment=comment,
        file_uploads=[{"filename": name, "title": title, "content": content} for name, title, content in files],
    )
    return [str(item.get("name") or item.get("title") or "") for item in sent.get("files") or []]
