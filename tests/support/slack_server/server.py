"""FakeSlackServer: the Web API methods, response_urls, files and Socket Mode of the local Slack server, routed."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from tests.support.slack_server.assistant import AssistantMethods
from tests.support.slack_server.chat import ChatMethods
from tests.support.slack_server.conversations import ConversationMethods
from tests.support.slack_server.files import FileMethods
from tests.support.slack_server.functions import FunctionMethods
from tests.support.slack_server.oauth import OAuthMethods
from tests.support.slack_server.openid import OpenIDMethods
from tests.support.slack_server.socket_mode import SocketMode
from tests.support.slack_server.streams import StreamMethods
from tests.support.slack_server.views import ViewMethods


class FakeSlackServer(ChatMethods, StreamMethods, ConversationMethods, ViewMethods, FileMethods, AssistantMethods,
                      FunctionMethods, OAuthMethods, OpenIDMethods, SocketMode):
    """Serves /api/{method}, /response/{key}, files (/files-pri/, /upload/) and Socket Mode (/link/) in a thread."""

    def routes(self, app: web.Application) -> None:
        """The Web API, response_urls, file downloads and uploads, and the Socket Mode websocket."""
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{key:.*}", self._response_url)
        app.router.add_get("/files-pri/{key}/download/{name:.+}", self._download)
        app.router.add_get("/files-pri/{key}/{name:.+}", self._download)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/link/", self._link)
        app.router.add_get("/link", self._link)
        self.openid_routes(app)

    def _handlers(self) -> dict[str, Callable[[dict], dict]]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._permalink,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "views.open": self._view_open,
            "views.push": self._view,
            "views.update": self._view,
            "views.publish": self._view_publish,
            "users.info": self._users_info,
            "users.list": self._users_list,
            "users.conversations": self._users_conversations,
            "usergroups.list": self._usergroups_list,
            "usergroups.users.list": self._usergroups_users_list,
            "conversations.open": self._conversations_open,
            "conversations.info": self._conversations_info,
            "conversations.join": self._conversations_join,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "files.info": self._files_info,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "apps.connections.open": self._connections_open,
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "assistant.threads.setTitle": self._set_title,
            "functions.completeSuccess": self._complete_success,
            "functions.completeError": self._complete_error,
        }
