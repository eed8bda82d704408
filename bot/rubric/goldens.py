"""Goldens: example triples a rubric file carries (with the passages retrieved for them, when the rubric reads
context), with what a sound judge returns for each, and the comparison."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Golden(BaseModel):
    """An example triple (or, for a pairwise rubric, a question with two answers) with what a sound judge returns:
    [low, high] ranges or allowed values per path."""

    model_config = ConfigDict(extra="forbid")
    name: str
    question: str
    reference: str = ""  # none for a rubric that grades without a reference
    answer: str | None = None
    answer_a: str | None = None  # a pairwise rubric's golden: its two answers, A then B
    answer_b: str | None = None
    context: str | list[str] | None = None  # the retrieved passages, for a rubric whose template holds $context
    expect: dict[str, Any]

    @property
    def passages(self) -> list[str] | None:
        """The golden's retrieved passages, in order (one for a context written as one text); None without any."""
        return passages(self.context)

    def problem(self, pairwise: bool) -> str | None:
        """Why the golden does not fit its rubric's kind (one answer, or answer_a and answer_b); None if it does."""
        if pairwise and (self.answer_a is None or self.answer_b is None or self.answer is not None):
            return "a pairwise rubric's golden gives answer_a and answer_b (and no answer)"
        if not pairwise and (self.answer is None or self.answer_a is not None or self.answer_b is not None):
            return "a golden gives answer (answer_a and answer_b are for a pairwise rubric)"
        return None


def passages(context: str | list[str] | None) -> list[str] | None:
    """Passages written in a rubric file as one text or a list of texts, as a list (None for none written)."""
    return [context] if isinstance(context, str) else context


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
