"""The local judge server with OpenAI's Batch API besides chat completions: /v1/files (upload, content) and
/v1/batches (create, retrieve, list, cancel), each batch walking through the statuses a test scripts."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.response_objects import chat_view, response_object

EXPIRED = {"code": "batch_expired", "message": "This request could not be executed before the completion window "
                                                "expired."}


@dataclass
class Batch:
    """One batch as the server keeps it: its input, the statuses still to come, and what it produced."""

    id: str
    input_file_id: str
    metadata: dict[str, str]
    steps: list[str]  # statuses still to come, one a retrieve; the last one stays
    endpoint: str = "/v1/chat/completions"  # what its lines ask: chat completions or responses
    status: str = "validating"
    created_at: int = field(default_factory=lambda: int(time.time()))
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    done: int = 0
    failed: int = 0


class BatchJudgeServer(FakeJudgeServer):
    """A FakeJudgeServer that also speaks the Batch API; `plan` is the statuses each new batch walks through, one per
    retrieve ("completed", "expired" with `partial` lines answered, "failed"); `batch_api=False` answers 404."""

    thread_name = "fake-batch-judge"

    def __init__(self) -> None:
        super().__init__()
        self.plan = ["in_progress", "completed"]
        self.partial = 0  # lines an expired batch answered before it expired
        self.batch_api = True
        self.list_status: int | None = None  # an error status the batch list answers with, when set
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, content)
        self.batches: dict[str, Batch] = {}
        self.created: list[str] = []  # batch ids in the order they were created
        self._batch_lock = threading.Lock()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)

    def batch_requests(self) -> list[dict[str, Any]]:
        """Every request line of every uploaded batch file, in upload order."""
        with self._batch_lock:
            contents = [content for purpose, content in self.files.values() if purpose == "batch"]
        return [json.loads(line) for content in contents for line in content.decode().splitlines() if line.strip()]

    def _missing(self) -> web.Response:
        return web.json_response({"error": {"message": "Invalid URL (POST /v1/batches)", "type": "invalid_request_error",
                                            "param": None, "code": None}}, status=404)

    def _file_id(self, purpose: str, content: bytes) -> str:
        with self._batch_lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = (purpose, content)
        return file_id

    async def _upload(self, request: web.Request) -> web.Response:
        if not self.batch_api:
            return self._missing()
        form = await request.post()
        upload = form["file"]
        content = upload.file.read()  # type: ignore[union-attr]
        file_id = self._file_id(str(form.get("purpose")), content)
        return web.json_response({"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                                  "filename": getattr(upload, "filename", "batch.jsonl"), "purpose": form.get("purpose"),
                                  "status": "processed"})

    async def _content(self, request: web.Request) -> web.Response:
        found = self.files.get(request.match_info["id"])
        if found is None:
            return web.json_response({"error": {"message": "No such File object", "type": "invalid_request_error"}},
                                     status=404)
        return web.Response(body=found[1], content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        if not self.batch_api:
            return self._missing()
        body = await request.json()
        with self._batch_lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            batch = Batch(batch_id, body["input_file_id"], body.get("metadata") or {}, list(self.plan),
                          endpoint=body.get("endpoint", "/v1/chat/completions"))
            batch.total = len([line for line in self.files[batch.input_file_id][1].decode().splitlines() if line])
            self.batches[batch_id] = batch
            self.created.append(batch_id)
        return web.json_response(self._object(batch))

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "No such batch", "type": "invalid_request_error"}}, status=404)
        if batch.steps:
            self._step(batch, batch.steps.pop(0) if len(batch.steps) > 1 else batch.steps[0])
        return web.json_response(self._object(batch))

    async def _list(self, request: web.Request) -> web.Response:
        if not self.batch_api:
            return self._missing()
        if self.list_status is not None:
            return web.json_response({"error": {"message": "batches are not enabled for this organization",
                                                "type": "invalid_request_error", "param": None, "code": None}},
                                     status=self.list_status)
        with self._batch_lock:
            found = [self._object(self.batches[batch_id]) for batch_id in reversed(self.created)]
        return web.json_response({"object": "list", "data": found, "has_more": False,
                                  "first_id": found[0]["id"] if found else None,
                                  "last_id": found[-1]["id"] if found else None})

    async def _cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "No such batch", "type": "invalid_request_error"}}, status=404)
        batch.steps = []
        batch.status = "cancelled"
        return web.json_response(self._object(batch))

    def _step(self, batch: Batch, status: str) -> None:
        """Move a batch to `status`, answering its lines when it ends."""
        if batch.status in ("completed", "expired", "failed", "cancelled"):
            return
        batch.status = status
        if status == "in_progress":
            batch.done = batch.total // 2  # half its requests answered so far, as the request counts then say
        if status == "failed":
            batch.errors = [{"code": "invalid_json_line", "message": "This line is not parseable as valid JSON.",
                             "param": None, "line": 1}]
        elif status in ("completed", "expired"):
            self._answer(batch, None if status == "completed" else self.partial)

    def _answer(self, batch: Batch, answered: int | None) -> None:
        """Write the output (and error) file of a batch, each line answered by the responder, up to `answered`."""
        lines = [json.loads(line) for line in self.files[batch.input_file_id][1].decode().splitlines() if line]
        output, errors = [], []
        for n, line in enumerate(lines):
            if answered is not None and n >= answered:
                errors.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"], "response": None,
                               "error": EXPIRED})
                continue
            responses = line.get("url") == "/v1/responses"
            reply = self._next_reply(chat_view(line["body"]) if responses else line["body"])
            if reply.status != 200:
                errors.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"],
                               "response": {"status_code": reply.status, "request_id": f"req_{n}",
                                            "body": {"error": reply.error}}, "error": None})
                continue
            output.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"], "error": None,
                           "response": {"status_code": 200, "request_id": f"req_{n}",
                                        "body": response_object(f"resp_batch_{n}", line["body"], reply, "completed")
                                        if responses else self.completion(line["body"], reply)}})
        batch.done, batch.failed = len(output), len(errors)
        if output:
            batch.output_file_id = self._file_id("batch_output", "".join(json.dumps(o) + "\n" for o in output).encode())
        if errors:
            batch.error_file_id = self._file_id("batch_output", "".join(json.dumps(e) + "\n" for e in errors).encode())

    @staticmethod
    def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The chat completion a batch line gets back."""
        return {"id": "chatcmpl-batch", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                             "finish_reason": reply.finish_reason}],
                "usage": {"prompt_tokens": reply.tokens_in, "completion_tokens": reply.tokens_out,
                          "total_tokens": reply.tokens_in + reply.tokens_out}}

    def _object(self, batch: Batch) -> dict[str, Any]:
        return {"id": batch.id, "object": "batch", "endpoint": batch.endpoint,
                "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
                "input_file_id": batch.input_file_id, "completion_window": "24h", "status": batch.status,
                "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
                "created_at": batch.created_at, "in_progress_at": None, "expires_at": batch.created_at + 86_400,
                "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
                "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": batch.total, "completed": batch.done, "failed": batch.failed},
                "metadata": batch.metadata}
