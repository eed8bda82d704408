"""Rows of a CSV as a run reads them: one per answer, numbered from line 2, with numbered questions and references."""

from __future__ import annotations

from bot.csvfiles.rows import CsvRow


def rows_of(*answers: str) -> list[CsvRow]:
    return [CsvRow(line=i + 2, question=f"question {i}", reference=f"reference {i}", answer=answer, model=None,
                   cells={"question": f"question {i}", "reference": f"reference {i}", "answer": answer})
            for i, answer in enumerate(answers)]

