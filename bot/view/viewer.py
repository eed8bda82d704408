"""Who looks at the web view: a person, the workspace they signed in from and the channels they may see (None: every
channel and the terminal's judgments, the person at this machine when nobody signs in)."""

from __future__ import annotations

import getpass
from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import BaseModel, ConfigDict

LABELER_LENGTH = 32  # what the history keeps of who labeled
TERMINAL = "terminal"  # how a page's address names the terminal's judgments (a Slack channel id never reads so)


class Viewer(BaseModel):
    """A person looking at the view: who labels (`user_id`, as the history keeps a label's author), of which
    workspace, and the channels whose judgments they may see (None: every channel and the terminal)."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    team_id: str | None = None
    name: str | None = None
    channels: frozenset[str] | None = None

    def sees(self, channel_id: str | None) -> bool:
        """Whether this person may see the judgments of `channel_id` (None: the terminal's)."""
        if self.channels is None:
            return True
        return channel_id is not None and channel_id in self.channels

    @property
    def sees_everything(self) -> bool:
        """Whether this person sees every channel and the terminal (no sign-in, on this machine)."""
        return self.channels is None

    def default_channel(self) -> str | None:
        """The channel a page shows when none is named: the terminal for the person at this machine, else the first
        of theirs (None too when they may see none)."""
        if self.channels is None or not self.channels:
            return None
        return min(self.channels)

    def channel(self, asked: str | None) -> str | None:
        """The channel a page's `channel` parameter names (TERMINAL: the terminal's; empty: the default), when this
        person may see it; web.HTTPNotFound when not (nothing says whether it exists)."""
        if asked is None or not asked.strip():
            channel = self.default_channel()
        else:
            channel = None if asked.strip() == TERMINAL else asked.strip()
        if not self.sees(channel):
            raise web.HTTPNotFound(text="No such channel here.")
        return channel


ViewerFor = Callable[[web.Request], Awaitable[Viewer | None]]
"""Who makes a request: a Viewer, or None when nobody signed in (the page then says how to)."""


def login_name() -> str:
    """The login name of the person at this machine, as the terminal labels with it; "terminal" when there is none."""
    try:
        return getpass.getuser()[:LABELER_LENGTH] or "terminal"
    except (KeyError, OSError):  # no name for this uid, as in some containers
        return "terminal"


def local_viewer_of(user_id: str | None = None) -> ViewerFor:
    """Every request made by the person at this machine, who sees every channel and labels as `user_id` (default:
    their login name, as `judgebot review label` does)."""
    viewer = Viewer(user_id=(user_id or login_name())[:LABELER_LENGTH], name=user_id or login_name())

    async def viewer_for(request: web.Request) -> Viewer | None:
        return viewer

    return viewer_for


async def local_viewer(request: web.Request) -> Viewer | None:
    """The person at this machine, without sign-in: every channel, labels under their login name."""
    return Viewer(user_id=login_name(), name=login_name())
