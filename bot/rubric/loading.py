"""Loading rubric files: one file validated strictly, and the set in force (built-in, then a team's directory)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path

import yaml
from pydantic import ValidationError

from bot.errors import RubricError
from bot.rubric.model import Rubric, describe

RUBRIC_SUFFIXES = (".yaml", ".yml")


def load_rubric(path: Path) -> Rubric:
    """Read and validate one rubric file; errors name the file and the field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise RubricError(f"{path.name}: cannot read the file: {err}") from None
    if not isinstance(data, dict):
        raise RubricError(f"{path.name}: expected a mapping of rubric fields at the top level")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as err:
        details = "; ".join(describe(e) for e in err.errors(include_url=False))
        raise RubricError(f"{path.name}: {details}") from None
    if path.stem != rubric.name:
        raise RubricError(f"{path.name}: name {rubric.name!r} must match the file name {path.stem!r}")
    try:
        rubric.self_check()
    except RubricError as err:
        raise RubricError(f"{path.name}: {err}") from None
    rubric.loaded_from(path)
    return rubric


class RubricSet:
    """The rubrics in force: built-in ones, then a team's directory (same name overrides)."""

    def __init__(self, rubrics: list[Rubric]) -> None:
        self._by_name: dict[str, Rubric] = {}
        for rubric in rubrics:
            self._by_name[rubric.name] = rubric
        self._by_key: dict[str, Rubric] = {}
        for rubric in self._by_name.values():
            for key in (rubric.name, *rubric.aliases):
                other = self._by_key.get(key.lower())
                if other is not None and other is not rubric:
                    raise RubricError(f"{_file(rubric)}: name or alias {key!r} is also used by {_file(other)}")
                self._by_key[key.lower()] = rubric

    def __iter__(self) -> Iterator[Rubric]:
        return iter(sorted(self._by_name.values(), key=lambda r: r.name))

    def __len__(self) -> int:
        return len(self._by_name)

    def find(self, name: str) -> Rubric | None:
        """The rubric called `name` or one of its aliases (any case), if there is one."""
        return self._by_key.get(name.strip().lower())

    def get(self, name: str) -> Rubric:
        """The rubric called `name` or one of its aliases; RubricError with a suggestion otherwise."""
        found = self._by_key.get(name.strip().lower())
        if found is not None:
            return found
        close = difflib.get_close_matches(name.strip().lower(), list(self._by_key), n=1, cutoff=0.5)
        hint = f" Did you mean {self._by_key[close[0]].name!r}?" if close else ""
        raise RubricError(f"No rubric named {name!r}.{hint} Available: {', '.join(r.name for r in self)}.")


def _file(rubric: Rubric) -> str:
    return rubric.source.name if rubric.source else rubric.name


def builtin_dir() -> Path:
    """The shipped rubrics: inside the installed package, or at the top of a checkout."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "builtin_rubrics"
    return installed if installed.is_dir() else package.parent / "rubrics"


def load_rubrics(extra_dir: Path | None = None) -> RubricSet:
    """Load the built-in rubrics and, when given, a team's directory; every file must be valid."""
    rubrics: list[Rubric] = []
    for directory in [builtin_dir(), *([extra_dir] if extra_dir else [])]:
        if not directory.is_dir():
            raise RubricError(f"{directory}: the rubric directory does not exist")
        files = sorted(p for p in directory.iterdir() if p.suffix in RUBRIC_SUFFIXES)
        rubrics.extend(load_rubric(path) for path in files)
    return RubricSet(rubrics)
