"""bot/store/tables/core.py and as_read.py, written from the table models: a SQLAlchemy Core twin of each table the
judging path and the reading commands use, every column with its type, nullability and defaults, and runs, judgments,
samples, batch parts and endpoint pauses as plain records. `python -m tests.support.core_twins` writes both; a test
fails when either is stale, so they cannot drift from the models (the schema itself stays the models' and the
migrations')."""

from __future__ import annotations

import enum
import sys
import types
import typing
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "bot" / "store" / "tables" / "core.py"
RECORDS_FILE = ROOT / "bot" / "store" / "tables" / "as_read.py"

# The tables twinned, by model: (module, class name). Their Core names are the table names in capitals.
TWINNED = [
    ("bot.store.tables.history", "RunTable"),
    ("bot.store.tables.history", "JudgmentTable"),
    ("bot.store.tables.history", "JudgmentSampleTable"),
    ("bot.store.tables.history", "JudgmentTally"),
    ("bot.store.tables.history", "BilledTally"),
    ("bot.store.tables.history", "RunBatchTable"),
    ("bot.store.tables.history", "Feedback"),
    ("bot.store.tables.trust", "Label"),
    ("bot.store.tables.trust", "ReviewCase"),
    ("bot.store.tables.processes", "EndpointPauseTable"),
    ("bot.store.tables.processes", "ModelListRead"),
    ("bot.store.tables.processes", "ListedShutdown"),
    ("bot.store.tables.background", "RunBackground"),
]
# The models read as records too (what every face is handed).
RECORDS = {"RunTable", "JudgmentTable", "JudgmentSampleTable", "RunBatchTable", "EndpointPauseTable"}

WRITTEN = ("Written from the table models by `python -m tests.support.core_twins`; do not edit by hand: a test fails when "
           "it is\nstale. The schema itself is the models' and the migrations'.")

TABLES_HEADER = f'''\
"""The history's tables that the judging path and the reading commands use, as SQLAlchemy Core tables: no ORM class
is loaded to write or read them (the table models cost a command about a third of its start-up; the records read
from them: bot.store.tables.as_read).

{WRITTEN}"""

from __future__ import annotations

import sqlalchemy as sa

from bot.records import RowState, RunState
from bot.store.clock import utcnow

CORE = sa.MetaData()
'''

RECORDS_HEADER = f'''\
"""Runs, judgments, their samples, batch parts and endpoint pauses as the records read from their Core tables
(bot.store.tables.core): plain dataclasses with the table models' fields and defaults, what every face is handed.

{WRITTEN}"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from bot.records import RowState, RunState
from bot.store.clock import utcnow
'''


def column_type(kind: sa.types.TypeEngine[Any]) -> str:
    """The Core type of a model's column, as source."""
    name = type(kind).__name__
    if name == "AutoString":
        length = getattr(kind, "length", None)
        return f"sa.String({length})" if length else "sa.String()"
    if isinstance(kind, sa.JSON):
        return "sa.JSON(none_as_null=True)" if kind.none_as_null else "sa.JSON()"
    for simple in (sa.Text, sa.BigInteger, sa.Integer, sa.Float, sa.Boolean, sa.DateTime, sa.Date):
        if type(kind) is simple:
            return f"sa.{simple.__name__}()"
    raise TypeError(f"no Core twin for the column type {kind!r}")


def value_source(value: object) -> str:
    """A default's value, as source (an enum member by its name)."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, str):
        return f'"{value}"' if value.isidentifier() else repr(value)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    raise TypeError(f"no source for the default {value!r}")


def column_source(column: sa.Column[Any]) -> str:
    """One column of a Core twin, as source."""
    parts = [f'"{column.name}"', column_type(column.type)]
    if column.primary_key:
        parts.append("primary_key=True")
    elif not column.nullable:
        parts.append("nullable=False")
    default = column.default
    if default is not None:
        arg = getattr(default, "arg", None)
        if callable(arg):
            target = getattr(arg, "__wrapped__", arg)
            parts.append(f"default={target.__name__}")
        else:
            parts.append(f"default={value_source(arg)}")
    server = column.server_default
    if isinstance(server, sa.DefaultClause):
        parts.append(f'server_default=sa.text("{str(server.arg).strip()}")')
    elif server is not None:
        raise TypeError(f"no source for the server default {server!r}")
    return f"    sa.Column({', '.join(parts)}),"


def annotation_source(annotation: object) -> str:
    """A record field's type, as source."""
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return " | ".join(annotation_source(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:  # pydantic's NaiveDatetime and the like
        return annotation_source(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(annotation_source(arg) for arg in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    if annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    if annotation is datetime or getattr(annotation, "__name__", "") == "NaiveDatetime":
        return "datetime"
    return typing.cast(type, annotation).__name__


def field_source(name: str, info: FieldInfo) -> str:
    """One field of a record, as source: the model's type and default."""
    annotation = annotation_source(info.annotation)
    if info.default_factory is not None:
        return f"    {name}: {annotation} = field(default_factory={info.default_factory.__name__})"
    if info.is_required():
        return f"    {name}: {annotation}"
    if info.default is None and "None" not in annotation.split(" | "):
        return f"    {name}: {annotation} = None  # type: ignore[assignment]  # None until inserted"
    return f"    {name}: {annotation} = {value_source(info.default)}"


def record_name(model: str) -> str:
    """The record of a table model: its name without "Table" (RunTable's is Run)."""
    return model.removesuffix("Table")


def model_of(module: str, name: str) -> Any:
    """A table model by its module and name."""
    __import__(module)
    return getattr(sys.modules[module], name)


def written() -> dict[Path, str]:
    """The whole of each written file (bot/store/tables/core.py and as_read.py), from today's models."""
    return {TABLES: tables_text(), RECORDS_FILE: records_text()}


def tables_text() -> str:
    """bot/store/tables/core.py: the Core twins."""
    out = [TABLES_HEADER]
    for module, name in TWINNED:
        table = model_of(module, name).__table__
        out += ["", f"{table.name.upper()} = sa.Table(", f'    "{table.name}", CORE,',
                *(column_source(column) for column in table.columns), ")", ""]
    return "\n".join(out).rstrip() + "\n"


def records_text() -> str:
    """bot/store/tables/as_read.py: the records."""
    out = [RECORDS_HEADER]
    for module, name in TWINNED:
        if name not in RECORDS:
            continue
        model, record = model_of(module, name), record_name(name)
        out += ["", "@dataclass(kw_only=True, slots=True)", f"class {record}:",
                f'    """A row of {model.__table__.name.upper()}, read: the fields of the table model {module}.{name}."""', "",
                *(field_source(field_name, info) for field_name, info in model.model_fields.items()), "",
                "    @classmethod", f"    def read(cls, row: sa.Row[Any]) -> {record}:",
                f'        """The record of a row read from {model.__table__.name.upper()} (every column selected)."""',
                "        return cls(**row._mapping)", "",
                "    @classmethod", f"    def of(cls, values: Sequence[Any]) -> {record}:",
                f'        """The record of every column of {model.__table__.name.upper()}, in order (part of a wider row)."""',
                "        return cls(**dict(zip((kept.name for kept in fields(cls)), values, strict=True)))", ""]
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    for path, text in written().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
