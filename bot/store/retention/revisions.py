"""Channels' revisions of rubrics rid of what alignment copied into them from cases (worked examples, people's notes)
once those cases' texts are removed: a copy is kept no longer than what it was copied from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from bot.figures import plural
from bot.store.clock import utcnow
from bot.store.counts.case_keys import REMOVED
from bot.store.tables.core import JUDGMENT
from bot.store.tables.history import table_of
from bot.store.tables.trust import Label, RubricRevision
from bot.store.trust.revisions import ACCEPTED, EARLIER_HASHES

if TYPE_CHECKING:
    from bot.store.database import Store

NOTES_HEAD = "# People's notes"  # how bot.trust.align.candidate_file heads the notes it lists, one a line
NOTE_LINE = "#   - "


@dataclass
class Pruned:
    """What one pass took out of revisions."""

    revisions: int = 0  # revisions rewritten
    in_force: int = 0  # of them, accepted in their channel: it judges without what was taken out from now on
    examples: int = 0  # worked examples taken out
    notes: int = 0  # people's notes taken out (listed in the file's head, or an example's)


def prune_revisions(store: Store, *, before: datetime, kept: Any) -> Pruned:
    """Take out of every revision (whatever its state) the worked examples whose texts no judgment of its channel
    keeps any longer, and the notes no label of its channel changed since `before` holds. `kept` is the SQL condition
    on a judgment that its texts are kept. A revision rewritten keeps its instructions, fields and the examples still
    kept, and says in its head what went; its text gets a new hash (the earlier ones are kept in its figures, so that
    judgments made with it still find it). Running it again changes nothing."""
    found = Pruned()
    r = table_of(RubricRevision)
    with store.engine.connect() as conn:
        ids = conn.execute(sa.select(r.c.id).order_by(r.c.id)).scalars().all()
    for revision_id in ids:
        with store.engine.begin() as conn:
            row = conn.execute(sa.select(r).where(r.c.id == revision_id).with_for_update(skip_locked=True)).first()
            changed = None if row is None else _pruned(conn, row, before, kept)
            if row is None or changed is None:
                continue
            content, content_hash, examples, notes = changed
            figures = dict(row.figures or {})
            if content_hash != row.content_hash:
                figures[EARLIER_HASHES] = [*figures.get(EARLIER_HASHES, []), row.content_hash]
            conn.execute(r.update().where(r.c.id == revision_id)
                         .values(content=content, content_hash=content_hash, figures=figures))
        found.revisions += 1
        found.in_force += row.state == ACCEPTED
        found.examples += examples
        found.notes += notes
    return found


def _pruned(conn: Connection, row: Any, before: datetime, kept: Any) -> tuple[str, str, int, int] | None:
    """A revision's text and hash with the copies of removed texts taken out, and how many examples and notes went;
    None when it holds no such copy."""
    import yaml  # a revision's text is read only when retention finds one to prune

    from bot.rubric import rubric_from_text
    from bot.yaml_text import dump_yaml, load_yaml

    head, body = _split(row.content)
    try:
        data = load_yaml(body)
    except yaml.YAMLError:
        data = None
    examples = data.get("examples") if isinstance(data, dict) else None
    examples = examples if isinstance(examples, list) else []
    listed = [line for line in head if line.startswith(NOTE_LINE)]
    if not examples and not listed:
        return None
    notes = _notes_kept(conn, row.channel_id, before)
    listed_gone = [line for line in listed if _one_line(line[len(NOTE_LINE):]) not in notes]
    left: list[Any] = []
    notes_gone = len(listed_gone)
    for example in examples:
        if not isinstance(example, dict) or not _held(conn, row.channel_id, example, kept):
            continue  # its note goes with it
        if example.get("note") and _one_line(str(example["note"])) not in notes:
            example = {key: value for key, value in example.items() if key != "note"}
            notes_gone += 1
        left.append(example)
    examples_gone = len(examples) - len(left)
    if not examples_gone and not notes_gone:
        return None
    if left != examples:
        assert isinstance(data, dict)
        data["examples"] = left
        if not left:
            del data["examples"]
        body = dump_yaml(data)
    head = [line for line in head if line not in listed_gone]
    if not any(line.startswith(NOTE_LINE) for line in head):
        head = [line for line in head if not line.startswith(NOTES_HEAD)]
    what = [f"{count} {word}" for count, word in ((examples_gone, f"worked {plural(examples_gone, 'example')}"),
                                                  (notes_gone, f"{plural(notes_gone, 'note')} people wrote")) if count]
    head.append(f"# {utcnow():%Y-%m-%d}: RETENTION_DAYS removed {' and '.join(what)}, copied from texts the history no "
                "longer keeps.\n")
    try:
        content_hash = rubric_from_text(body).content_hash
    except Exception:  # it did not read as a rubric before either: the copies go all the same, its hash stays
        content_hash = row.content_hash
    return "".join(head) + body, content_hash, examples_gone, notes_gone


def _split(content: str) -> tuple[list[str], str]:
    """The comment lines that head a revision's text (each with its line end), and the YAML after them."""
    lines = content.splitlines(keepends=True)
    count = 0
    while count < len(lines) and lines[count].startswith("#"):
        count += 1
    head = [line if line.endswith("\n") else line + "\n" for line in lines[:count]]
    return head, "".join(lines[count:])


def _held(conn: Connection, channel_id: str, example: dict[str, Any], kept: Any) -> bool:
    """Whether a judgment of the channel whose texts are kept holds the example's question, answer (and reference)."""
    j = JUDGMENT
    where = [j.c.channel_id == channel_id, j.c.question == str(example.get("question", "")),
             j.c.answer == str(example.get("answer", "")), kept]
    if example.get("reference"):
        where.append(j.c.reference == str(example["reference"]))
    return conn.execute(sa.select(j.c.id).where(*where).limit(1)).first() is not None


def _notes_kept(conn: Connection, channel_id: str, before: datetime) -> set[str]:
    """The notes of the channel's labels changed since `before`, each in one line."""
    label = table_of(Label)
    found = conn.execute(sa.select(label.c.note).where(label.c.channel_id == channel_id, label.c.updated_at >= before,
                                                       label.c.note.is_not(None), label.c.note != REMOVED))
    return {_one_line(note) for note in found.scalars()}


def _one_line(text: str) -> str:
    return " ".join(text.split())
