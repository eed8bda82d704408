"""Which column of a CSV holds which role (question, reference, answer, model, a pair's two answers, the retrieved
context): the header names each role goes by, the columns a person names (`role=column`), and each role found in one
column, or a sentence naming the columns missing and the headers that nearly spell them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from bot.csvfiles.spelling import closest
from bot.errors import CsvError

REQUIRED = ("question", "reference", "answer")
PAIR_REQUIRED = ("question", "reference", "answer_a", "answer_b")  # a file of pairs, for a pairwise rubric
ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "prompt"),
    "reference": ("reference", "ground truth", "expected", "reference answer"),
    "answer": ("answer", "generated answer", "model response", "model answer", "response", "output"),
    "model": ("model", "model name"),
    "answer_a": ("answer a", "response a", "output a"),
    "answer_b": ("answer b", "response b", "output b"),
    "model_a": ("model a",),
    "model_b": ("model b",),
    "context": ("context", "contexts", "retrieved context", "passages"),
}
PAIR_ROLES = ("answer_a", "answer_b", "model_a", "model_b")
BOTH_KINDS = ("question", "reference", "context")  # roles of a file of answers and of a file of pairs alike
CHOOSE = "{role}={column}"  # how a person names the column of a role, unless the caller words it otherwise

_PAIR = re.compile(r",(?=[^,=]*=)")  # the comma between two role=column pairs (a column name may hold one)


def normalise(header: str) -> str:
    """A header as the role names are compared with it: lower case, `_` and `-` as spaces, spaces collapsed."""
    return " ".join(header.lower().replace("_", " ").replace("-", " ").split())


def names_role(header: str, role: str) -> bool:
    """Whether a header is one of the names a column of `role` is found by ("Retrieved context" for context)."""
    return normalise(header) in ALIASES[role]


def parse_columns(texts: Iterable[str]) -> dict[str, str]:
    """{role: column} from `answer=model_response` texts, each holding one pair or several separated by commas.

    Raises:
        CsvError: A text is not role=column, names no role, or gives a role twice.
    """
    pairs = []
    for text in texts:
        for pair in _PAIR.split(text):
            role, equals, column = pair.partition("=")
            if not equals or not column.strip():
                raise CsvError(f"cannot read the column choice {pair.strip()!r}: write role=column, such as "
                               "answer=model_response")
            pairs.append((role, column))
    return choose_columns(pairs)


def choose_columns(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{role: column} from (role, column) pairs, spaces around each stripped; CsvError for an unknown role or one
    given twice."""
    chosen: dict[str, str] = {}
    for role, column in pairs:
        role, column = role.strip().lower(), column.strip()
        if role not in ALIASES:
            raise CsvError(f"{role or '(nothing)'} is not a role of a column: the roles are {', '.join(ALIASES)}")
        if role in chosen:
            raise CsvError(f'the {role} column is given twice ("{chosen[role]}" and "{column}"); give one')
        chosen[role] = column
    return chosen


def position(headers: list[str], column: str) -> int | None:
    """Where the column a person named is: its exact name, else the one name equal to it in any case and spacing."""
    if column in headers:
        return headers.index(column)
    alike = [i for i, header in enumerate(headers) if normalise(header) == normalise(column)]
    return alike[0] if len(alike) == 1 else None


def meant(names: Iterable[str], headers: list[str], taken: set[int]) -> str | None:
    """The header (at none of the `taken` positions) that nearly spells one of `names`, as the file writes it."""
    spelled: dict[str, str] = {}
    for at, header in enumerate(headers):
        if at not in taken and header.strip():
            spelled.setdefault(normalise(header), header)
    found = closest([normalise(name) for name in names], spelled)
    return spelled[found] if found is not None else None


def resolve(path: Path, raw: list[str], headers: list[str], chosen: Mapping[str, str], how: str, *,
            context: bool = False) -> dict[str, int]:
    """The column position of each role: the one a person named, else the one column whose header fits the role (the
    context only for a rubric that reads it: elsewhere a context column is a column like any other)."""
    index: dict[str, int] = {}
    for role, column in chosen.items():
        at = position(headers, column)
        if at is None:
            found = ", ".join(f'"{h}"' for h in headers)
            guessed = meant([column], headers, set())
            guess = f'; did you mean "{guessed}"? The' if guessed is not None else "; the"
            raise CsvError(f'{path}: there is no column "{column}" for the {role}{guess} columns are {found}')
        index[role] = at
    taken = set(index.values())
    for role, names in ALIASES.items():
        fits = [i for i, header in enumerate(raw) if i not in taken and normalise(header) in names]
        if role in index or not fits or (role == "context" and not context):
            continue
        if len(fits) > 1:
            first, second = headers[fits[0]], headers[fits[1]]
            raise CsvError(f'{path}: both "{first}" and "{second}" could be the {role} column. Say which one to '
                           f"grade, such as {how.format(role=role, column=second)}, or rename the other")
        index[role] = fits[0]
    return index


def check_required(path: Path, headers: list[str], index: Mapping[str, int], how: str, *, reference: bool,
                   pairs: bool, context: bool) -> None:
    """Raise CsvError unless every role the rubric needs has its column: said whole, every column missing named with
    the headers that nearly spell one, and how to name a column instead.

    A file whose rows hold two answers, judged with a rubric that grades one, is told to use a pairwise rubric or to
    name the column to grade."""
    missing = [role for role in (*(PAIR_REQUIRED if pairs else REQUIRED), *(("context",) if context else ()))
               if role not in index and (reference or role != "reference")]
    if missing == ["answer"] and {"answer_a", "answer_b"} <= index.keys():
        raise CsvError(f"{path}: each row holds two answers ({headers[index['answer_a']]}, "
                       f"{headers[index['answer_b']]}) and the rubric grades one; compare them with a pairwise "
                       "rubric (such as the built-in pairwise), or name the column to grade: "
                       f"{how.format(role='answer', column=headers[index['answer_a']])}")
    if not missing:
        return
    found = ", ".join(f'"{h}"' for h in headers) or "none"
    accepted = "; ".join(f"{role}: {', '.join(ALIASES[role])}" for role in missing)
    spelled = {role: header for role in missing
               if (header := meant(ALIASES[role], headers, set(index.values()))) is not None}
    guess = " and ".join(f'"{header}" for the {role}' if len(missing) > 1 else f'"{header}"'
                         for role, header in spelled.items())
    why = (" The rubric grades each answer against the passages retrieved for it ($context in its template): a "
           "context cell holds one passage as text, or several as a JSON list of strings." if "context" in missing
           else "")
    raise CsvError(
        f"{path}: no {' or '.join(missing)} column.{why}" + (f" Did you mean {guess}?" if guess else "")
        + f" Headers found: {found}. Accepted header names (any case; spaces, _ and - count alike) - {accepted}. "
        f"Rename the header cells and try again, or name the column: "
        f"{how.format(role=missing[0], column=spelled.get(missing[0], 'COLUMN'))}."
    )
