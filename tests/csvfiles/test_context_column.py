"""The context column of a CSV: the headers that name it, a cell of text or a JSON list of passages, a cell that is
neither refused with its reason, a file without it refused for a rubric that reads context, and a cell kept by the
history as the way to write it back from its passages (exactly, or the cell as it is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.csvfiles.passages import input_cells, kept_cell, read_passages, written_cell
from bot.csvfiles.reading import open_csv
from bot.csvfiles.rows import CsvRow, MalformedRow
from bot.errors import CsvError
from bot.records import context_text
from tests.support.cli import write_rows


@pytest.mark.parametrize("header", ["context", "Contexts", "retrieved_context", "Retrieved Context", "passages"])
def test_each_header_of_the_context_role_is_read(tmp_path: Path, header: str) -> None:
    path = write_rows(tmp_path / "rag.csv", ["question", "reference", "answer", header],
                      [["Q?", "R.", "A.", json.dumps(["one", "two"])], ["Q2?", "R.", "A.", "just one"]])
    source = open_csv(path, context=True)
    assert source.columns["context"] == header
    assert [row.context for row in source if isinstance(row, CsvRow)] == [["one", "two"], ["just one"]]


def test_a_cell_is_text_or_a_json_list_of_strings_and_nothing_is_guessed() -> None:
    assert read_passages("") == read_passages("  \n") == []
    assert read_passages("The Mensa opens at 11.") == ["The Mensa opens at 11."]
    assert read_passages(' ["a", "b"] ') == ["a", "b"] and read_passages("[]") == []
    for cell, why in (("[1] The Mensa", "it is not valid JSON"), ('["a", 2]', "it is JSON, but not a list of strings"),
                      ('[{"text": "a"}]', "it is JSON, but not a list of strings")):
        reason = read_passages(cell)
        assert isinstance(reason, str) and reason.startswith(f'the context cell starts with "[" but {why}'), reason


def test_a_row_whose_cell_is_not_a_list_is_rejected_with_its_reason(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "rag.csv", ["question", "reference", "answer", "context", "model"],
                      [["Q?", "R.", "A.", '["a", 2]', "bot"], ["Q2?", "R.", "A.", "fine", "bot"]])
    bad, good = open_csv(path, context=True)
    assert isinstance(bad, MalformedRow) and bad.line == 2 and bad.model == "bot"
    assert "not a list of strings" in bad.reason
    assert isinstance(good, CsvRow) and good.context == ["fine"]


def test_a_file_without_the_column_is_refused_only_for_a_rubric_that_reads_context(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "plain.csv", ["question", "reference", "answer", "contxt"], [["Q?", "R.", "A.", "p"]])
    with pytest.raises(CsvError) as refused:
        open_csv(path, context=True)
    assert "no context column. The rubric grades each answer against the passages retrieved for it" in str(refused.value)
    assert 'Did you mean "contxt"?' in str(refused.value)
    [row] = open_csv(path)
    assert isinstance(row, CsvRow) and row.context is None and "context" not in open_csv(path).columns
    [chosen] = open_csv(path, {"context": "contxt"}, context=True)
    assert isinstance(chosen, CsvRow) and chosen.context == ["p"]
    both = write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "context", "passages"],
                      [["Q?", "R.", "A.", "p", "q"]])
    [row] = open_csv(both)  # two context columns trouble only a rubric that reads one
    assert isinstance(row, CsvRow)
    with pytest.raises(CsvError, match='both "context" and "passages" could be the context column'):
        open_csv(both, context=True)


@pytest.mark.parametrize(("cell", "form"), [
    ('["a", "b"]', "json"), ('["caf\\u00e9"]', "json-ascii"), ('["café","b"]', "json-compact"),
    ('["caf\\u00e9","b"]', "json-compact-ascii"), ("just one", "text"), ('["just one"]', "json"),
])
def test_a_context_cell_is_kept_as_the_way_to_write_it_back_from_its_passages(cell: str, form: str) -> None:
    passages = read_passages(cell)
    assert isinstance(passages, list)
    context = context_text(passages)
    assert context is not None
    kept = kept_cell(cell, passages, context)
    assert kept == {"passages": form}
    assert written_cell(kept, context) == cell
    assert input_cells({"question": "Q?", "contexts": kept}, context) == {"question": "Q?", "contexts": cell}


@pytest.mark.parametrize("cell", ['[ "a" ]', '["a",\n "b"]', "", "  one passage  ", ' ["a"]', '["a", "b"] '])
def test_a_context_cell_no_form_gives_back_exactly_is_kept_as_it_is(cell: str) -> None:
    passages = read_passages(cell)
    assert isinstance(passages, list)
    context = context_text(passages)
    assert context is not None
    if cell.strip() and not cell.strip().startswith("["):  # plain text: the passage is the cell, spaces and all
        assert kept_cell(cell, passages, context) == {"passages": "text"}
    else:
        assert kept_cell(cell, passages, context) == cell
        assert input_cells({"contexts": cell}, context) == {"contexts": cell}
