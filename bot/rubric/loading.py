"""The rubrics in force: the shipped ones, then a team's directory, each file validated when first asked for, and which
file a name or alias stands for (one file read and validated: bot.rubric.rubric_file)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from bot.errors import RubricError
from bot.rubric.formulas import did_you_mean
from bot.rubric.model import Rubric
from bot.rubric.rubric_file import BrokenFile, FileProblems, parsed_file, typed, validated_file

RUBRIC_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, eq=False)
class Unbuilt:
    """A rubric file read and parsed but not yet validated: validating builds the rubric's models, and a command using
    one rubric need not pay for every other. `keys` are the names it claims as its text gives them."""

    path: Path
    data: dict[str, Any]

    @property
    def keys(self) -> frozenset[str]:
        name, aliases = _text(self.data.get("name")), self.data.get("aliases")
        aliases = [text for alias in aliases if (text := _text(alias)) is not None] if isinstance(aliases, list) else []
        return _claimed(name, aliases)

    def build(self) -> Rubric:
        """The rubric; FileProblems with every problem found."""
        return validated_file(self.path, self.data)


class RubricSet:
    """The rubrics in force, and the files left out: broken, or sharing a name or an alias with another file.

    Files given `unbuilt` are validated when first asked for; any that shares a name with another file is validated
    at once, so that which file wins a name is decided exactly as if every file had been."""

    def __init__(self, rubrics: Iterable[Rubric], broken: Iterable[BrokenFile] = (),
                 folders: Sequence[Path] = (), replaced: Mapping[str, Path] = MappingProxyType({}),
                 unbuilt: Iterable[Unbuilt] = ()) -> None:
        self.folders = list(folders)  # the directories read: the shipped rubrics', then a team's
        self.replaced = dict(replaced)  # the shipped files a team's file of the same name replaces, by name
        built, left, waiting = list(rubrics), list(broken), list(unbuilt)
        claims: dict[str, int] = {}
        for keys in [_keys(rubric) for rubric in built] + [file.keys for file in waiting]:
            for key in keys:
                claims[key] = claims.get(key, 0) + 1
        self._unbuilt: dict[str, Unbuilt] = {}
        for file in waiting:
            if all(claims[key] == 1 for key in file.keys):
                self._unbuilt |= dict.fromkeys(file.keys, file)
                continue
            try:  # a name another file claims too: who wins is decided now
                built.append(file.build())
            except FileProblems as err:
                left.append(BrokenFile(file.path, err.problems, err.names))
        self._resolve(built, left)

    def _resolve(self, rubrics: list[Rubric], broken: list[BrokenFile]) -> None:
        """Decide which rubric each name and alias stands for, and which files are left out."""
        self._rubrics, self._given_broken = rubrics, broken
        users: dict[str, list[Rubric]] = {}
        for rubric in rubrics:
            for key in sorted(_keys(rubric)):
                users.setdefault(key, []).append(rubric)
        left_out: dict[str, BrokenFile] = {}
        shipped = builtin_dir().resolve()
        for key, sharing in users.items():
            if len(sharing) == 1:
                continue
            builtin = [rubric for rubric in sharing if _path(rubric).resolve().parent == shipped]
            if len(builtin) == 1:  # a shipped rubric keeps its names: the team's file that takes one is left out
                users[key] = builtin
                for rubric in sharing:
                    if rubric is not builtin[0]:
                        left_out.setdefault(rubric.name, BrokenFile(_path(rubric), (
                            f"name or alias {key!r} is a name of the shipped rubric {builtin[0].name}; rename it to "
                            "use this file",), _names(rubric)))
                continue
            for rubric in sharing:  # none of them wins
                others = " and ".join(_path(other).name for other in sharing if other is not rubric)
                left_out.setdefault(rubric.name, BrokenFile(_path(rubric), (
                    f"name or alias {key!r} is also used by {others}; neither is used until one is renamed",),
                    _names(rubric)))
        self._by_key = {key: sharing[0] for key, sharing in users.items()
                        if len(sharing) == 1 and sharing[0].name not in left_out}
        self._by_name = {rubric.name: rubric for rubric in self._by_key.values()}
        self._broken = sorted([*broken, *left_out.values()], key=lambda found: found.path.name)

    def _lookup(self, key: str) -> Rubric | None:
        """The rubric `key` names, its file validated now if it was waiting."""
        if (file := self._unbuilt.get(key)) is not None:
            self._build([file])
        return self._by_key.get(key)

    def _build(self, files: list[Unbuilt]) -> None:
        """Validate waiting `files` and decide the names again with what they hold."""
        rubrics, broken = list(self._rubrics), list(self._given_broken)
        while files:
            file = files.pop(0)
            for claimed in file.keys:
                self._unbuilt.pop(claimed, None)
            try:
                rubric = file.build()
            except FileProblems as err:
                broken.append(BrokenFile(file.path, err.problems, err.names))
                continue
            rubrics.append(rubric)
            if _keys(rubric) != file.keys:  # named otherwise than its text reads (a number as an alias): who wins
                files = list(dict.fromkeys([*files, *self._unbuilt.values()]))  # a name needs every file
        self._resolve(rubrics, broken)

    def _settled(self) -> RubricSet:
        """This set with every file validated: what lists the rubrics or the broken files needs them all."""
        if self._unbuilt:
            self._build(list(dict.fromkeys(self._unbuilt.values())))
        return self

    def __iter__(self) -> Iterator[Rubric]:
        return iter(sorted(self._settled()._by_name.values(), key=lambda r: r.name))

    def __len__(self) -> int:
        return len(self._settled()._by_name)

    @property
    def broken(self) -> list[BrokenFile]:
        """The files left out, by file name."""
        return self._settled()._broken

    def find(self, name: str) -> Rubric | None:
        """The rubric called `name` or one of its aliases (any case, full-width letters as plain), if there is one."""
        return self._lookup(typed(name))

    def exact(self, name: str, content_hash: str) -> Rubric | None:
        """The loaded rubric called `name` if it is that very version (its content hash), as a run made with it needs;
        None when it is not loaded or has changed since."""
        found = self._lookup(typed(name))
        return found if found is not None and found.content_hash == content_hash else None

    def get(self, name: str) -> Rubric:
        """The rubric called `name` or one of its aliases; RubricError with a suggestion otherwise."""
        key = typed(name)
        found = self._lookup(key)
        if found is not None:
            return found
        self._settled()  # what to suggest instead needs every file read
        if broken := [b for b in self._broken if b.named(key)]:
            raise RubricError(self._broken_text(broken[0], key))
        hint = did_you_mean(key, self._by_key)
        for alias, rubric in self._by_key.items():  # the closest key may be an alias: name its rubric
            hint = hint.replace(repr(alias), repr(rubric.name))
        left_out = ""
        if self._broken:  # a name the broken files' could not be read from may be the one meant
            left_out = (f" Left out until fixed: {', '.join(str(b.path) for b in self._broken)} "
                        "(`judgebot rubrics` says why).")
        raise RubricError(f"No rubric named {name!r}.{hint} Available: {', '.join(r.name for r in self)}.{left_out}")

    def _broken_text(self, broken: BrokenFile, key: str) -> str:
        """Why the rubric `key` names cannot be used: its file, and every problem in it by field."""
        count = len(broken.problems)
        shipped = (f"It replaces the shipped rubric {broken.path.stem}: fix it, or remove it to use the shipped one."
                   if broken.path.stem in self.replaced else "")
        team = self.folders[1:] and broken.path.parent.resolve() == self.folders[-1].resolve()
        return (f"The rubric file {broken.path.name}{' in RUBRICS_DIR' if team else ''} is broken, so the rubric "
                f"{key!r} cannot be used until it is fixed ({count} {'problem' if count == 1 else 'problems'}):\n"
                + "".join(f"  - {problem}\n" for problem in broken.problems) + shipped).rstrip("\n")


def _text(value: Any) -> str | None:
    """A name or alias as the validated rubric holds it: a number written for one reads as text."""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _claimed(name: str | None, aliases: Iterable[str]) -> frozenset[str]:
    """The keys a rubric's name and aliases claim in a set (its name as written, each alias trimmed, lower case)."""
    return frozenset({*([name] if name is not None else []), *(alias.strip().lower() for alias in aliases)})


def _keys(rubric: Rubric) -> frozenset[str]:
    return _claimed(rubric.name, rubric.aliases)


def _names(rubric: Rubric) -> frozenset[str]:
    return frozenset(typed(text) for text in (rubric.name, *rubric.aliases))


def _path(rubric: Rubric) -> Path:
    return rubric.source or Path(f"{rubric.name}.yaml")


def builtin_dir() -> Path:
    """The shipped rubrics: inside the installed package, or at the top of a checkout."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "builtin_rubrics"
    return installed if installed.is_dir() else package.parent / "rubrics"


def load_rubrics(extra_dir: Path | None = None) -> RubricSet:
    """The built-in rubrics and, when given, a team's directory (a file there replaces the built-in of its name).

    A broken file is left out and reported with the set, so that it does not stop every other rubric. Each file is
    validated when a command first asks for its rubric (or lists them all), as RubricSet says.
    """
    files: dict[str, list[Path]] = {}
    replaced: dict[str, Path] = {}
    folders = [builtin_dir(), *([extra_dir] if extra_dir else [])]
    for directory in folders:
        if not directory.is_dir():
            raise RubricError(f"{directory}: the rubric directory does not exist")
        here: dict[str, list[Path]] = {}
        for path in sorted(p for p in directory.iterdir() if p.suffix in RUBRIC_SUFFIXES):
            here.setdefault(path.stem, []).append(path)
        if directory.resolve() != folders[0].resolve():  # a team's file named like a shipped one replaces it
            replaced |= {stem: files[stem][0] for stem in here if stem in files}
        files.update(here)
    unbuilt: list[Unbuilt] = []
    broken: list[BrokenFile] = []
    for paths in files.values():
        if len(paths) > 1:  # name.yaml and name.yml
            broken.extend(BrokenFile(path, (f"{' and '.join(p.name for p in paths if p != path)} defines the rubric "
                                            f"{path.stem!r} too; keep one of the files",)) for path in paths)
            continue
        try:
            unbuilt.append(Unbuilt(paths[0], parsed_file(paths[0])))
        except FileProblems as err:
            broken.append(BrokenFile(paths[0], err.problems, err.names))
    return RubricSet((), broken, folders, replaced, unbuilt)
