"""A local Slack-compatible Web API, response_url and Socket Mode server for offline tests of the real slack_sdk."""

from tests.support.slack_server.core import BOT_ID, BOT_USER_ID, Call
from tests.support.slack_server.files import FILE_TYPES, SERVE_MODES
from tests.support.slack_server.server import FakeSlackServer
from tests.support.slack_server.views import VIEW_BLOCKS, VIEW_BYTES, VIEW_SECTION_TEXT, view_problems

__all__ = ["BOT_ID", "BOT_USER_ID", "FILE_TYPES", "SERVE_MODES", "VIEW_BLOCKS", "VIEW_BYTES", "VIEW_SECTION_TEXT", "Call",
           "FakeSlackServer", "view_problems"]
