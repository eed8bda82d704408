"""The structured-output forms a judge endpoint is asked for, strictest first, and the step down when one is refused:
kept per model and schema, so that the one rubric an endpoint refuses steps down alone."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any, Literal

import openai

from bot.llm.answers import message_of, names_range_keyword
from bot.llm.endpoints import portable_schema

log = logging.getLogger(__name__)

# The strict schema, the same schema without the range keywords some endpoints refuse, any JSON object, plain text.
OutputMode = Literal["json_schema", "portable_schema", "json_object", "text"]
Key = tuple[str, str, str]  # the model, the schema's name and a hash of its content


class OutputModes:
    """The output mode requests of each model and schema are sent with now (the strict schema until refused)."""

    def __init__(self) -> None:
        self._modes: dict[Key, OutputMode] = {}
        self._digests: dict[int, tuple[dict[str, Any], str]] = {}  # id of a schema -> (the schema, its digest)
        self._portable: dict[Key, dict[str, Any]] = {}

    def key(self, model: str, schema_name: str, schema: dict[str, Any]) -> Key:
        """What a mode is kept under, the schema's hash worked out once for each schema (a rubric hands every request
        the same one)."""
        known = self._digests.get(id(schema))
        if known is None or known[0] is not schema:
            known = (schema, hashlib.sha256(json.dumps(schema, sort_keys=True, default=str).encode()).hexdigest()[:16])
            self._digests[id(schema)] = known
        return model, schema_name, known[1]

    def of(self, key: Key) -> OutputMode:
        """The mode requests under `key` are sent with now."""
        return self._modes.get(key, "json_schema")

    def response_format(self, schema_name: str, schema: dict[str, Any], key: Key, mode: OutputMode) -> dict[str, Any]:
        """The request's `response_format` in `mode` (nothing for plain text)."""
        if mode in ("json_schema", "portable_schema"):
            if mode == "portable_schema":
                if key not in self._portable:
                    self._portable[key] = portable_schema(schema)
                schema = self._portable[key]
            spec = {"name": schema_name, "schema": schema, "strict": True}
            return {"response_format": {"type": "json_schema", "json_schema": spec}}
        if mode == "json_object":
            return {"response_format": {"type": "json_object"}}
        return {}

    def step_down(self, key: Key, mode: OutputMode, err: openai.APIStatusError) -> None:
        """The endpoint refused `mode`: the next form down (the portable schema when it named a range keyword)."""
        following: OutputMode = ("portable_schema" if mode == "json_schema" and names_range_keyword(err)
                                 else "json_object" if mode in ("json_schema", "portable_schema") else "text")
        self._modes[key] = following
        log.warning("judge endpoint refused response_format %s for %s (%s); using %s", mode, key[1], message_of(err),
                    following)
