"""Tests for bot.csvio: every input file is written as explicit bytes into tmp_path."""

from __future__ import annotations

import codecs
import csv
import os
import time
import tracemalloc

import pytest

from bot.csvfiles.columns import ALIASES, REQUIRED, parse_columns
from bot.csvfiles.layout import guess_delimiter
from bot.csvfiles.reading import open_csv
from bot.csvfiles.results import ResultsWriter, csv_line, flatten, neutralise
from bot.csvfiles.rows import CsvRow, MalformedRow
from bot.errors import CsvError

ARABIC = "ما هي عاصمة مصر؟"
HEBREW = "מה הבירה של ישראל?"
MIXED = "東京 is 日本の首都 — القاهرة / ירושלים 😀"


def put(tmp_path, data: bytes, name: str = "in.csv"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def rows(path):
    return list(open_csv(path))


# --- encodings -------------------------------------------------------------------------------


def test_utf8_without_bom(tmp_path):
    text = f"question,reference,answer\n{ARABIC},القاهرة,{MIXED}\n"
    src = open_csv(put(tmp_path, text.encode("utf-8")))
    assert (src.encoding, src.delimiter) == ("utf-8", ",")
    [row] = list(src)
    assert row == CsvRow(2, ARABIC, "القاهرة", MIXED, None,
                         {"question": ARABIC, "reference": "القاهرة", "answer": MIXED})


def test_utf8_with_bom_strips_it_from_the_header(tmp_path):
    src = open_csv(put(tmp_path, codecs.BOM_UTF8 + f"question,reference,answer\nq,{HEBREW},a\n".encode()))
    assert src.encoding == "utf-8-sig"
    assert src.headers == ["question", "reference", "answer"]
    assert [r.reference for r in src] == [HEBREW]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_tab_separated(tmp_path, codec):
    bom = codecs.BOM_UTF16_LE if codec == "utf-16-le" else codecs.BOM_UTF16_BE
    text = f"Question\tReference\tAnswer\r\n{ARABIC}\t{HEBREW}\t{MIXED}\r\n"
    src = open_csv(put(tmp_path, bom + text.encode(codec)))
    assert (src.encoding, src.delimiter) == ("utf-16", "\t")
    assert src.headers == ["Question", "Reference", "Answer"]
    [row] = list(src)
    assert (row.line, row.question, row.reference, row.answer) == (2, ARABIC, HEBREW, MIXED)


def test_cp1252_fallback(tmp_path):
    data = b"question,reference,answer\ncaf\xe9,\x93hi\x94,ok\n"
    src = open_csv(put(tmp_path, data))
    assert src.encoding == "cp1252"
    [row] = list(src)
    assert (row.question, row.reference) == ("café", "“hi”")


@pytest.mark.slow
def test_cp1252_detected_even_when_the_bad_byte_is_far_into_the_file(tmp_path):
    body = b"q,r,a\n" * 200_000  # ~1.2 MB of valid ASCII first, crossing pre-scan chunks
    src = open_csv(put(tmp_path, b"question,reference,answer\n" + body + b"caf\xe9,r,a\n"))
    assert src.encoding == "cp1252"
    last = list(src)[-1]
    assert (last.line, last.question) == (200_002, "café")


def test_neither_utf8_nor_cp1252(tmp_path):
    path = put(tmp_path, b"question,reference,answer\nq,r,a\nq,\x81\xe9,a\n")
    with pytest.raises(CsvError, match="neither UTF-8 nor Windows-1252.*line 3"):
        open_csv(path)


def test_utf8_split_across_prescan_chunks_is_not_mistaken_for_cp1252(tmp_path):
    head = b"question,reference,answer\n"
    pad = b"x" * ((1 << 20) - len(head) - 1)  # puts a 2-byte character across the 1 MiB boundary
    src = open_csv(put(tmp_path, head + pad + "é,r,a\n".encode()))
    assert src.encoding == "utf-8"
    assert list(src)[0].question.endswith("xé")


def test_decode_error_during_iteration_is_a_csv_error_naming_the_row(tmp_path):
    path = put(tmp_path, b"question,reference,answer\nq,r,a\n")
    src = open_csv(path)
    path.write_bytes(b"question,reference,answer\nq,r,a\nq,caf\xe9,a\n")  # changed after opening
    with pytest.raises(CsvError, match="row"):
        list(src)


# --- refusing files that are not CSV ----------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"  \r\n\t\n  ", codecs.BOM_UTF8, codecs.BOM_UTF16_LE,
                                  codecs.BOM_UTF8 + b"\n\n", b"sep=;\n"])
def test_empty_files(tmp_path, data):
    with pytest.raises(CsvError, match="the file is empty"):
        open_csv(put(tmp_path, data))


@pytest.mark.parametrize("magic", [b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"])
def test_excel_workbook(tmp_path, magic):
    with pytest.raises(CsvError, match="Excel workbook.*CSV"):
        open_csv(put(tmp_path, magic + os.urandom(2000), "book.csv"))


def test_random_binary_with_nul(tmp_path):
    data = bytes(range(256)) * 8 + b"\x00" + os.urandom(1000)
    with pytest.raises(CsvError, match="not a text CSV"):
        open_csv(put(tmp_path, data))


def test_missing_file(tmp_path):
    with pytest.raises(CsvError, match="cannot read"):
        open_csv(tmp_path / "nope.csv")


# --- delimiters --------------------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_delimiters(tmp_path, delimiter):
    text = delimiter.join(["question", "reference", "answer"]) + "\n"
    text += delimiter.join(['"a, b; c"', "r", "x\ty" if delimiter != "\t" else "xy"]) + "\n"
    src = open_csv(put(tmp_path, text.encode()))
    assert src.delimiter == delimiter
    [row] = list(src)
    assert row.question == "a, b; c"


def test_delimiters_inside_quoted_header_cells_are_not_counted(tmp_path):
    src = open_csv(put(tmp_path, b'question;reference;answer;"notes, a, b, c, d"\nq;r;a;n\n'))
    assert src.delimiter == ";"
    assert src.headers[-1] == "notes, a, b, c, d"


def test_delimiter_tie_or_none_falls_back_to_comma(tmp_path):
    assert open_csv(put(tmp_path, b"question,reference,answer,a;b;c;d\n")).delimiter == ","
    assert guess_delimiter("question") == ","
    assert guess_delimiter('"a;b;c"\tx') == "\t"


def test_sep_line_sets_delimiter_and_is_not_a_row(tmp_path):
    data = b"sep=;\r\nquestion;reference;answer\r\nq1;r1;a,1\r\nq2;r2;a2\r\n"
    src = open_csv(put(tmp_path, data))
    assert src.delimiter == ";"
    assert [(r.line, r.answer) for r in src] == [(2, "a,1"), (3, "a2")]


def test_sep_line_overrides_counting(tmp_path):
    src = open_csv(put(tmp_path, codecs.BOM_UTF8 + b"sep=,\nquestion,reference,answer,x;y;z;w\nq,r,a;b,x\n"))
    assert src.delimiter == ","
    assert [r.answer for r in src] == ["a;b"]


# --- cells -------------------------------------------------------------------------------------


def test_quoted_multiline_cells_count_as_one_row(tmp_path):
    data = b'question,reference,answer\r\n"line 1\r\nline 2\nline 3","r",a\r\nq2,r2,a2\r\n'
    got = rows(put(tmp_path, data))
    assert [(r.line, r.question) for r in got] == [(2, "line 1\r\nline 2\nline 3"), (3, "q2")]


def test_cell_longer_than_csv_default_limit(tmp_path):
    big = "é" * 300_000
    got = rows(put(tmp_path, f'question,reference,answer\nq,"{big}",a\n'.encode()))
    assert got[0].reference == big


def test_whitespace_inside_cells_is_kept(tmp_path):
    [row] = rows(put(tmp_path, b" question , reference ,answer\n  q  ,r\t, a \n"))
    assert (row.question, row.reference, row.answer) == ("  q  ", "r\t", " a ")
    assert row.cells == {"question": "  q  ", "reference": "r\t", "answer": " a "}


# --- headers -----------------------------------------------------------------------------------


def test_header_aliases_in_odd_case_and_spacing(tmp_path):
    data = b"Query,Ground Truth, MODEL_RESPONSE ,model  name,notes\nq,r,a,gpt-x,n\n"
    src = open_csv(put(tmp_path, data))
    assert src.columns == {"question": "Query", "reference": "Ground Truth",
                           "answer": "MODEL_RESPONSE", "model": "model  name"}
    [row] = list(src)
    assert (row.question, row.reference, row.answer, row.model) == ("q", "r", "a", "gpt-x")
    assert list(row.cells) == ["Query", "Ground Truth", "MODEL_RESPONSE", "model  name", "notes"]


@pytest.mark.parametrize("header", ["prompt,ground-truth,generated_answer", "PROMPT,Expected,Output",
                                    "question,reference_answer,model-answer", "query,REFERENCE,response"])
def test_more_aliases(tmp_path, header):
    assert set(open_csv(put(tmp_path, header.encode() + b"\n")).columns) == set(REQUIRED)


def test_the_columns_named_win_over_other_fitting_headers(tmp_path):
    path = put(tmp_path, b"prompt,question,reference,answer,output\np,q,r,a,o\n")
    src = open_csv(path, {"question": "prompt", "answer": "output"})
    assert src.columns == {"question": "prompt", "reference": "reference", "answer": "output"}
    assert src.chosen == {"question", "answer"}
    [row] = list(src)
    assert (row.question, row.answer) == ("p", "o")


def test_aliases_are_normalised():
    for names in ALIASES.values():
        for name in names:
            assert name == " ".join(name.lower().replace("_", " ").replace("-", " ").split())


def test_model_column(tmp_path):
    src = open_csv(put(tmp_path, b"question,reference,answer,model\nq,r,a,m1\nq,r,a,\nq,r,a, \n"))
    assert src.columns["model"] == "model"
    assert [r.model for r in src] == ["m1", None, None]
    src = open_csv(put(tmp_path, b"question,reference,answer\nq,r,a\n", "nomodel.csv"))
    assert "model" not in src.columns
    assert [r.model for r in src] == [None]


def test_missing_required_columns_message(tmp_path):
    with pytest.raises(CsvError) as err:
        open_csv(put(tmp_path, b"Prompt,Notes,Score\np,n,1\n"))
    message = str(err.value)
    assert "reference" in message and "answer" in message
    assert '"Prompt", "Notes", "Score"' in message  # the headers found
    assert "ground truth" in message and "expected" in message  # accepted reference names
    assert "model response" in message and "output" in message  # accepted answer names
    assert "question:" not in message  # present roles are not listed as missing


# --- rows --------------------------------------------------------------------------------------


def test_wrong_cell_counts_are_malformed_and_other_rows_still_come(tmp_path):
    data = (b"question,reference,answer\n"
            b"q1,r1,a1\n"
            b"q2,r2,a2,extra,more\n"
            b"\n"
            b"q4,r4\n"
            b'"q5\nstill q5",r5,a5\n'
            b"q6,r6,a6\n")
    got = rows(put(tmp_path, data))
    assert [type(r).__name__ for r in got] == ["CsvRow", "MalformedRow", "MalformedRow", "CsvRow", "CsvRow"]
    assert got[1] == MalformedRow(3, "it has 5 cells but the header has 3", ["q2", "r2", "a2", "extra", "more"])
    assert got[2] == MalformedRow(5, "it has 2 cells but the header has 3", ["q4", "r4"])
    assert [r.line for r in got] == [2, 3, 5, 6, 7]


def test_empty_question_or_reference_is_malformed_but_empty_answer_is_not(tmp_path):
    data = b"question,reference,answer\n  ,r,a\nq,,a\n,\t,a\nq,r,\n"
    got = rows(put(tmp_path, data))
    assert got[0] == MalformedRow(2, "the question cell is empty", ["  ", "r", "a"])
    assert got[1].reason == "the reference cell is empty"
    assert got[2].reason == "the question and reference cells are empty"
    assert isinstance(got[3], CsvRow) and got[3].answer == ""


def test_blank_lines_and_rows_of_empty_cells_are_skipped_but_counted(tmp_path):
    data = b"\r\nquestion,reference,answer\r\n\r\n,,\r\nq,r,a\r\n,,\r\n"
    assert [r.line for r in rows(put(tmp_path, data))] == [5]


def test_iterating_twice_gives_the_same_rows(tmp_path):
    src = open_csv(put(tmp_path, b"question,reference,answer\nq1,r1,a1\nq2,r2\nq3,r3,a3\n"))
    first = list(src)
    assert first == list(src) and len(first) == 3


@pytest.mark.slow
def test_iteration_streams_in_constant_memory(tmp_path):
    # ~40 MB in rows of ~2 KB; memory must not follow the file size
    row = ("q " * 300 + "؟," + "r " * 300 + ',"' + "a, " * 200 + '",gpt\n').encode()
    block = row * 1000
    path = tmp_path / "big.csv"
    with path.open("wb") as f:
        f.write(b"question,reference,answer,model\n")
        blocks = 40_000_000 // len(block) + 1
        for _ in range(blocks):
            f.write(block)
    assert path.stat().st_size > 40_000_000
    started = time.perf_counter()
    tracemalloc.start()
    try:
        count = 0
        last = None
        for last in open_csv(path):  # noqa: B007 - the last row is checked below
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == blocks * 1000
    assert isinstance(last, CsvRow) and last.line == count + 1
    assert peak < 20_000_000, f"peak {peak / 1e6:.1f} MB"
    assert time.perf_counter() - started < 30


# --- writing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["=1+1", "+1", "-5", "@SUM(A1)", "\tx", "\rx", "=HYPERLINK(\"x\")"])
def test_neutralise_prefixes_formulas(value):
    assert neutralise(value) == "'" + value


@pytest.mark.parametrize("value", ["", "hello", "5", "a=b", " =1", "'=1", "é", ARABIC, "3-4", "\n=1"])
def test_neutralise_leaves_safe_text(value):
    assert neutralise(value) == value


def test_flatten():
    nested = {"evaluation": {"coverage": {"score": 5, "notes": ["a", "b"]}, "ok": True},
              "empty": {}, "top": None}
    assert flatten(nested) == {"evaluation.coverage.score": 5, "evaluation.coverage.notes": ["a", "b"],
                               "evaluation.ok": True, "empty": {}, "top": None}
    assert flatten({"a": {"b": 1}}, "x") == {"x.a.b": 1}
    assert flatten({}) == {}


def test_results_writer(tmp_path):
    path = tmp_path / "out.csv"
    fields = ["question", "score", "delta", "ok", "bad", "tags", "detail", "missing", "none", "formula"]
    with ResultsWriter(path, fields) as out:
        out.write({"question": "q, \"quoted\"\nnext", "score": 4.5, "delta": -1, "ok": True, "bad": False,
                   "tags": ["ä", 1], "detail": {"k": "عربي"}, "none": None, "formula": "=cmd()", "extra": 1})
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    with path.open(encoding="utf-8-sig", newline="") as f:
        header, row = list(csv.reader(f))
    assert header == fields
    assert dict(zip(header, row)) == {
        "question": 'q, "quoted"\nnext', "score": "4.5", "delta": "-1", "ok": "true", "bad": "false",
        "tags": '["ä", 1]', "detail": '{"k": "عربي"}', "missing": "", "none": "", "formula": "'=cmd()"}


def test_a_results_line_is_what_the_csv_module_writes_byte_for_byte():
    import io
    import random

    # the characters the csv module quotes or lets through, and those a writer could get wrong (NUL, line separators)
    alphabet = ["a", " ", '"', ",", "\r", "\n", "\t", "'", "=", "é", "\x00", "\u2028", "\x85", "\\", "😀"]
    draw = random.Random(7)
    for _ in range(5000):
        row = ["".join(draw.choice(alphabet) for _ in range(draw.randrange(6))) for _ in range(draw.randrange(1, 4))]
        expected = io.StringIO()
        csv.writer(expected).writerow(row)
        assert csv_line(row) == expected.getvalue(), row
    assert csv_line([""]) == '""\r\n' and csv_line(["", ""]) == ",\r\n"


def test_non_latin_text_round_trips_through_read_and_write(tmp_path):
    source = put(tmp_path, codecs.BOM_UTF8 + f"question,reference,answer\n{ARABIC},{HEBREW},{MIXED}\n".encode())
    out = tmp_path / "out.csv"
    with ResultsWriter(out, ["question", "reference", "answer"]) as writer:
        for row in open_csv(source):
            writer.write(row.cells)
    assert out.read_bytes() == source.read_bytes().replace(b"\n", b"\r\n")
    [back] = rows(out)
    assert (back.question, back.reference, back.answer) == (ARABIC, HEBREW, MIXED)


# --- hardening: no silent wrong reads -----------------------------------------------------------


@pytest.mark.parametrize("good", ["Zürich", ARABIC])
def test_utf8_with_one_stray_cp1252_byte_is_refused_naming_the_line_and_byte(tmp_path, good):
    data = f"question,reference,answer\n{good},r,a\n".encode() + b"q,r \x96 dash,a\n"
    with pytest.raises(CsvError, match="line 3 has byte 0x96, which is not UTF-8.*CSV UTF-8"):
        open_csv(put(tmp_path, data))


def test_a_stray_byte_before_the_first_utf8_character_is_refused_too(tmp_path):
    body = b"q,r,a\n" * 200_000  # the UTF-8 text is in a later pre-scan chunk than the stray byte
    data = b"question,reference,answer\nq,r\x96,a\n" + body + "Zürich,r,a\n".encode()
    with pytest.raises(CsvError, match="line 2 has byte 0x96, which is not UTF-8"):
        open_csv(put(tmp_path, data))


def test_utf8_marked_file_with_a_stray_byte_names_the_line_and_byte(tmp_path):
    data = codecs.BOM_UTF8 + "question,reference,answer\nZürich,r,a\n\n".encode() + b"q,\x93r,a\n"
    with pytest.raises(CsvError, match="line 4 has byte 0x93, which is not UTF-8"):
        open_csv(put(tmp_path, data))


def test_a_wholly_cp1252_file_is_still_read(tmp_path):
    src = open_csv(put(tmp_path, "question,reference,answer\nZürich?,“Zürich”,a – b\n".encode("cp1252")))
    assert src.encoding == "cp1252"
    assert [(r.question, r.reference, r.answer) for r in src] == [("Zürich?", "“Zürich”", "a – b")]


def test_a_cp1252_file_where_two_bytes_happen_to_form_utf8_is_still_read_as_cp1252(tmp_path):
    text = "question,reference,answer\nGröße?,Über 100 Gebäude.,Rund 100; “groß”.\n"  # ß” is the UTF-8 of U+07D4
    [row] = rows(put(tmp_path, text.encode("cp1252")))
    assert row.answer == "Rund 100; “groß”."


def test_a_utf8_file_with_several_stray_bytes_says_how_many(tmp_path):
    data = "question,reference,answer\nZürich,Zürich,Zürich\n".encode() + b"q,\x96r\x96,a\n"
    with pytest.raises(CsvError, match="line 3 has byte 0x96.*and 1 more bytes like it"):
        open_csv(put(tmp_path, data))


def test_zurich_and_arabic_survive_a_utf8_file(tmp_path):
    [row] = rows(put(tmp_path, f"question,reference,answer\nZürich,{ARABIC},a\n".encode()))
    assert (row.question, row.reference) == ("Zürich", ARABIC)


def lone_surrogates(items) -> list[str]:
    texts = [t for item in items for t in (item.cells.values() if isinstance(item, CsvRow) else item.cells)]
    return [t for t in texts if any("\ud800" <= ch <= "\udfff" for ch in t)]


@pytest.mark.parametrize("data", [
    f"question,reference,answer\n{ARABIC},r,a\n".encode() + b"q,\xed\xa0\x80,a\n",  # an encoded surrogate in UTF-8
    codecs.BOM_UTF16_LE + "question\treference\tanswer\r\nq\t".encode("utf-16-le") + b"\x00\xd8"
    + "r\ta\r\n".encode("utf-16-le"),  # a lone high surrogate in UTF-16
])
def test_no_lone_surrogate_comes_out_of_decoding(tmp_path, data):
    with pytest.raises(CsvError, match="not valid|not UTF-8"):
        open_csv(put(tmp_path, data))


def test_an_encoded_surrogate_in_a_file_without_utf8_is_read_as_cp1252_text(tmp_path):
    got = rows(put(tmp_path, b"question,reference,answer\nq,\xed\xa0\x80,a\n"))
    assert got[0].reference == "í\xa0€" and lone_surrogates(got) == []


def test_nul_bytes_past_the_binary_check_are_stripped_from_cells(tmp_path):
    pad = b"q,r,a\n" * 2000  # past the first 8 KB that are checked for binary data
    data = b"question,reference,answer\n" + pad + b"q\x00x,r,a\x00\x00\nq,\x00,a\n"
    got = rows(put(tmp_path, data))
    assert got[-2].question == "qx" and got[-2].answer == "a" and got[-2].cells["question"] == "qx"
    assert got[-1].reason == "the reference cell is empty"
    assert not any("\x00" in text for item in got[-2:] for text in (item.cells.values() if isinstance(
        item, CsvRow) else item.cells))


def test_nul_characters_of_a_utf16_file_are_stripped_from_cells_and_headers(tmp_path):
    text = "question\treference\tan\x00swer\r\nq\x00\tr\ta\r\n"
    src = open_csv(put(tmp_path, codecs.BOM_UTF16_LE + text.encode("utf-16-le")))
    assert src.headers == ["question", "reference", "answer"]
    assert [(r.question, r.cells["answer"]) for r in src] == [("q", "a")]


@pytest.mark.parametrize(("header", "first", "second"), [
    ("question,reference,answer,model_response", "answer", "model_response"),
    ("prompt,reference,question,answer", "prompt", "question"),
    ("question,reference,answer,model,Model Name", "model", "Model Name"),
    ("question,reference,answer,answer", "answer", "answer.2"),
])
def test_two_columns_for_one_role_are_refused_naming_both(tmp_path, header, first, second):
    with pytest.raises(CsvError) as err:
        open_csv(put(tmp_path, header.encode() + b"\nq,r,a,b\n"))
    message = str(err.value)
    assert f'"{first}"' in message and f'"{second}"' in message
    assert f"={second}" in message  # how to choose


def test_the_way_to_choose_a_column_is_worded_by_the_caller(tmp_path):
    path = put(tmp_path, b"question,reference,answer,output\nq,r,a,o\n")
    with pytest.raises(CsvError, match="a line `answer: output`"):
        open_csv(path, how="a line `{role}: {column}` in the message")


@pytest.mark.parametrize(("columns", "expected"), [
    ({"answer": "model_response"}, ("q", "mr")),
    ({"answer": "answer"}, ("q", "a")),
    ({"answer": "Model Response", "question": "question"}, ("q", "mr")),  # any case; spaces, _ and - alike
    ({"answer": "notes"}, ("q", "n")),  # any column, not only the known names
])
def test_an_explicit_mapping_chooses_the_column(tmp_path, columns, expected):
    src = open_csv(put(tmp_path, b"question,reference,answer,model_response,notes\nq,r,a,mr,n\n"), columns)
    [row] = list(src)
    assert (row.question, row.answer) == expected
    assert src.columns["answer"] == {"a": "answer", "mr": "model_response", "n": "notes"}[expected[1]]
    assert row.cells == {"question": "q", "reference": "r", "answer": "a", "model_response": "mr", "notes": "n"}


def test_a_column_mapped_to_a_role_is_not_taken_for_another(tmp_path):
    src = open_csv(put(tmp_path, b"question,reference,answer,output\nq,r,a,o\n"), {"reference": "answer"})
    assert src.columns == {"question": "question", "reference": "answer", "answer": "output"}


def test_a_mapping_naming_no_column_is_a_clear_error(tmp_path):
    with pytest.raises(CsvError, match='no column "model_reply" for the answer.*"question", "reference", "answer"'):
        open_csv(put(tmp_path, b"question,reference,answer\nq,r,a\n"), {"answer": "model_reply"})


@pytest.mark.parametrize(("text", "expected"), [
    ("answer=model_response", {"answer": "model_response"}),
    ("answer=model_response,question=prompt", {"answer": "model_response", "question": "prompt"}),
    (" Answer = a, b , question= prompt ", {"answer": "a, b", "question": "prompt"}),  # a comma inside a name
])
def test_parse_columns(text, expected):
    assert parse_columns([text]) == expected


@pytest.mark.parametrize(("texts", "problem"), [
    (["answers=x"], "answers is not a role"),
    (["answer"], "role=column"),
    (["answer="], "role=column"),
    (["answer=a", "answer=b"], "answer column is given twice"),
])
def test_parse_columns_refuses_what_it_cannot_use(texts, problem):
    with pytest.raises(CsvError, match=problem):
        parse_columns(texts)


def test_duplicate_header_names_keep_every_column(tmp_path):
    src = open_csv(put(tmp_path, b"question,reference,answer,notes,notes,notes.2,notes\nq,r,a,1,2,3,4\n"))
    assert src.headers == ["question", "reference", "answer", "notes", "notes.3", "notes.2", "notes.4"]
    [row] = list(src)
    assert row.cells == {"question": "q", "reference": "r", "answer": "a", "notes": "1", "notes.3": "2",
                         "notes.2": "3", "notes.4": "4"}


def test_a_trailing_delimiter_on_each_row_is_accepted_but_extra_text_is_not(tmp_path):
    data = b"question;reference;answer\nq1;r1;a1;\nq2;r2;a2;; \nq3;r3;a3;x\n"
    got = rows(put(tmp_path, data))
    assert [(type(r).__name__, r.line) for r in got] == [("CsvRow", 2), ("CsvRow", 3), ("MalformedRow", 4)]
    assert got[1].cells == {"question": "q2", "reference": "r2", "answer": "a2"}


def test_a_trailing_delimiter_on_the_header_only_is_accepted_but_a_missing_named_cell_is_not(tmp_path):
    data = b"question,reference,answer,,\nq1,r1,a1\nq2,r2,a2,\nq3,r3,a3,,\nq4,r4\n"
    got = rows(put(tmp_path, data))
    assert [(type(r).__name__, r.line) for r in got] == [("CsvRow", 2), ("CsvRow", 3), ("CsvRow", 4), ("MalformedRow", 5)]
    assert got[0].answer == "a1" and got[0].cells["answer"] == "a1"


@pytest.mark.parametrize("tail", ['q2,"r2,a2\nq3,r3,a3\n', 'q2,r2,"a2', 'q2,r2,"a2\n\n'])
def test_a_quote_never_closed_makes_its_row_malformed(tmp_path, tail):
    got = rows(put(tmp_path, ("question,reference,answer\nq1,r1,a1\n" + tail).encode()))
    assert isinstance(got[0], CsvRow) and len(got) == 2
    assert isinstance(got[1], MalformedRow) and got[1].line == 3
    assert "quote" in got[1].reason and "never closed" in got[1].reason
    assert lone_surrogates(got) == []


def test_a_quote_never_closed_in_the_header_is_refused(tmp_path):
    with pytest.raises(CsvError, match="header.*quote.*never closed"):
        open_csv(put(tmp_path, b'question,reference,"answer\nq,r,a\n'))


def test_closed_quotes_at_the_end_of_the_file_are_fine(tmp_path):
    got = rows(put(tmp_path, b'question,reference,answer\nq,r,"a ""b"""'))
    assert [r.answer for r in got] == ['a "b"']


@pytest.mark.parametrize("above", [b",,,\n", b";;;\r\n\r\n", b'"","",""\n', b",\t, \n"])
def test_a_row_of_delimiters_above_the_header_is_skipped_like_a_blank_line(tmp_path, above):
    src = open_csv(put(tmp_path, above + b"question;reference;answer\nq;r;a\n"))
    assert (src.delimiter, src.headers) == (";", ["question", "reference", "answer"])
    assert [r.line for r in src] == [above.count(b"\n") + 2]
