"""Goldens: example triples a rubric file carries, with what a sound judge returns for each, and the comparison."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Golden(BaseModel):
    """An example triple with what a sound judge returns: [low, high] ranges or allowed values per path."""

    model_config = ConfigDict(extra="forbid")
    name: str
    question: str
    reference: str = ""  # none for a rubric that grades without a reference
    answer: str
    expect: dict[str, Any]


def misses(expect: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Expectations not met: [low, high] is a range, a list of strings the allowed values, anything else exact."""
    found = []
    for path, wanted in expect.items():
        value = values.get(path)
        if isinstance(wanted, list) and len(wanted) == 2 and all(isinstance(w, (int, float)) for w in wanted):
            ok = isinstance(value, (int, float)) and wanted[0] <= value <= wanted[1]
        elif isinstance(wanted, list):
            ok = value in wanted
        else:
            ok = value == wanted
        if not ok:
            found.append(f"{path} = {value!r}, expected {wanted!r}")
    return found
