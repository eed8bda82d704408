"""`--json`: what a reading command shows, as one JSON document with documented, stable keys (docs/json.md)."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer

# C1 control characters (CSI among them) are legal in a JSON string, but a terminal showing the document may obey
# them: written as \u escapes, they read back as the same text. (JSON itself escapes C0 ones, ESC among them.)
C1 = re.compile("[\x7f-\x9f]")


def iso_utc(moment: datetime) -> str:
    """A moment as ISO 8601 in UTC, such as "2026-11-11T12:00:00Z" (the history keeps naive UTC times)."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.isoformat().replace("+00:00", "Z")


UtcTime = Annotated[datetime, PlainSerializer(iso_utc, return_type=str)]
Interval = tuple[float, float]  # a 95 % interval: [low, high]


class Document(BaseModel):
    """A JSON document or a part of one: its keys are its fields, each documented by the docstring under it (read by
    the reference, docs/json.md, when it is written: a command showing a document does not parse its own source)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """pydantic's JSON schema of the document, each key described by the docstring under its field (read when a
        schema is asked for, not when the document is imported)."""
        from bot.cli.json_output.reference import key_meanings, parts_of

        schema = super().model_json_schema(*args, **kwargs)
        for model in (cls, *parts_of(cls)):
            keys = (schema if model is cls else schema.get("$defs", {}).get(model.__name__, {})).get("properties", {})
            for name, meaning in key_meanings(model).items():
                if name in keys:
                    keys[name].setdefault("description", meaning)
        return schema


def print_json(document: Document) -> None:
    """Write `document` to standard output as one JSON document (UTF-8, indented), and nothing else."""
    text = document.model_dump_json(indent=2)  # a figure that is not a number (NaN) becomes null
    sys.stdout.write(C1.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n")
    sys.stdout.flush()
