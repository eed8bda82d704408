"""`judgebot rubrics` as a `--json` document: the rubrics in force, and the files left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.cli.json_output import Document

if TYPE_CHECKING:
    from bot.rubric import Rubric, RubricSet


class RubricEntry(Document):
    """A rubric that can be used."""

    name: str
    """Its name (`--rubric NAME`)."""
    aliases: list[str]
    """Other names it answers to."""
    version: str
    """Its version."""
    title: str
    """Its title."""
    description: str
    """What it grades."""
    kind: str
    """pointwise (grades one answer) or pairwise (compares two)."""
    fields: list[str]
    """The judge's output fields."""
    tag_field: str | None
    """The output field that holds its tag (such as result_tag); null without one."""
    tags: list[str]
    """The values its tag takes, in the rubric's order; empty without one."""
    source: str | None
    """The file it was read from."""

    @classmethod
    def of(cls, rubric: Rubric) -> RubricEntry:
        """A loaded rubric."""
        from bot.trust.labels import tag_order

        return cls(name=rubric.name, aliases=list(rubric.aliases), version=rubric.version, title=rubric.title,
                   description=rubric.description, kind=rubric.kind, fields=list(rubric.output),
                   tag_field=rubric.headline.tag, tags=tag_order(rubric),
                   source=None if rubric.source is None else str(rubric.source))


class BrokenFile(Document):
    """A rubric file left out until it is fixed."""

    path: str
    """The file."""
    problem: str
    """What is wrong with it."""


class RubricsDocument(Document):
    """`judgebot rubrics --json`: the rubrics in force (the shipped ones, then RUBRICS_DIR's)."""

    rubrics: list[RubricEntry]
    """The rubrics."""
    broken: list[BrokenFile]
    """The files left out."""
    folders: list[str]
    """Where the files were read from: the shipped folder, then RUBRICS_DIR."""

    @classmethod
    def of(cls, chosen: list[Rubric], found: RubricSet) -> RubricsDocument:
        """The rubrics `chosen` of the set `found`."""
        return cls(rubrics=[RubricEntry.of(rubric) for rubric in chosen],
                   broken=[BrokenFile(path=str(file.path), problem=file.problem) for file in found.broken],
                   folders=[str(folder) for folder in found.folders])
