"""Terminal tables at narrow widths: the model under test is never cut, less important columns go first."""

from __future__ import annotations

import io

from rich.console import Console

from bot.cli.views.terminal_text import Column, fitted_table

COLUMNS = [Column("model under test"), Column("rubric", 1), Column("mean headline", 1), Column("tags", 3, True),
           Column("people agree", 2)]


def drawn(width: int, rows: list[tuple[str, ...]]) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(fitted_table(console, COLUMNS, rows))
    return console.export_text().splitlines()


def cells(lines: list[str], column: int) -> str:
    """The text of one column over every body line, joined (a folded cell comes back whole)."""
    body = [line for line in lines if line.startswith("│")]
    return "".join(line.split("│")[1:-1][column].strip() for line in body)


def test_a_model_name_longer_than_the_terminal_wraps_whole_and_the_rubric_stays() -> None:
    name = "campus-bot-" + "x" * 90
    lines = drawn(60, [(name, "eth", "100.0", "Correct 12, Generic 3", "-")])
    assert max(len(line) for line in lines) <= 60 and "…" not in "".join(lines)
    assert cells(lines, 0) == name
    assert cells(lines, 1) == "eth"


def test_columns_go_least_important_first_and_a_narrow_one_comes_back_when_it_fits() -> None:
    rows = [("campus-bot-v2", "eth", "100.0", "Correct 12, Generic 3", "75% (3/4)")]
    assert "tags" in drawn(120, rows)[1] and "people agree" in drawn(120, rows)[1]
    narrow = " ".join(drawn(40, rows)[:4])
    assert "model" in narrow and "rubric" in narrow and "mean" in narrow
    assert "tags" not in narrow and "people" not in narrow

    columns = [Column("model"), Column("rubric", 1), Column("long notes", 2), Column("n", 3)]
    console = Console(width=30, record=True, file=io.StringIO())
    console.print(fitted_table(console, columns, [("bot-a", "eth", "x" * 30, "7")]))
    header = console.export_text().splitlines()[1]
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == ["model", "rubric", "n"]  # "n" fits once notes go


def test_a_check_just_below_its_gate_shows_the_digits_that_tell_them_apart() -> None:
    import io

    from rich.console import Console

    from bot.cli.views.calibration import show_check
    from bot.figures import percents_apart
    from bot.trust.calibration import Agreement, calibrate
    from bot.trust.drift import Gate

    assert percents_apart(90 / 116, 0.78) == ("77.6%", "78.0%")
    assert percents_apart(0.5, 0.8) == ("50%", "80%") and percents_apart(0.8, 0.8) == ("80%", "80%")
    console = Console(file=io.StringIO(), width=200)
    figures = calibrate([])
    assert isinstance(figures, Agreement)
    figures = figures.model_copy(update={"agreement": 90 / 116, "pass_n": 116, "pass_agree": 90, "n": 116})
    show_check(console, ("Today's judge", figures), None, Gate(min_agreement=0.78, point=True))
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "below: agreement of at least 78.0% (--min-agreement, --point): 77.6%" in printed


def test_a_question_shows_its_choices(monkeypatch) -> None:
    import io

    from rich.console import Console

    from bot.cli.cost import agreed

    class Answering(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Answering("y\n"))
    console = Console(file=io.StringIO(), width=120)
    assert agreed("Judge it?", "refused", yes=False, console=console)
    assert console.file.getvalue() == "Judge it? [y/N] "  # type: ignore[attr-defined]


def test_small_words_agree_with_their_numbers(tmp_path) -> None:
    import io
    from datetime import datetime

    from rich.console import Console

    from bot.cli.views.calibration import show_file_labels
    from bot.trust.calibration import LabeledVerdict, calibrate
    from bot.trust.file_labels import FileLabels

    pair = LabeledVerdict(judge_passed=True, human_passed=True, judge_values={"correctness": 2.0},
                          human_values={"correctness": 1.52}, labeled_at=datetime(2026, 11, 20), judge_model="j",
                          rubric_hash="h")
    console = Console(file=io.StringIO(), width=200)
    show_file_labels(console, FileLabels(columns=["human_pass"], calibration=calibrate([pair], criteria=["correctness"])))
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "(1 label)" in printed and "the judge scores 0.48 higher, mean absolute difference 0.48 (1 label)" in printed
