"""What the terminal shows of the review queue worked case by case: a case's texts (its retrieved passages
numbered), why it was queued, the judge's verdict unless the channel reviews blind, and what was saved."""

from __future__ import annotations

from rich.console import Console

from bot.cli.views.terminal_text import shown
from bot.figures import plural
from bot.records import context_of
from bot.store import Judgment
from bot.trust.review import REASONS
from bot.trust.review_queue import Offered


def verdict_line(judgment: Judgment) -> str:
    """The judge's verdict in one line: its label, headline and pass/fail."""
    score = f"{judgment.headline:.0f}/100" if judgment.headline is not None else "no score"
    passed = "passed" if judgment.passed else "did not pass" if judgment.passed is not None else "no pass/fail"
    return f"{shown(judgment.label or '')} · {score} · {passed}"


def show_case(console: Console, offered: Offered, *, waiting: int) -> None:
    """One case for the person's label: why it is asked, its texts (each passage numbered), and the judge's verdict
    unless the channel reviews blind."""
    case, judgment = offered.case, offered.judgment
    why = REASONS.get(case.reason, case.reason) + (" (at random)" if case.random and case.reason != "random" else "")
    more = f" · {waiting:,} more {'waits' if waiting == 1 else 'wait'}" if waiting else ""
    console.rule(f"[bold]A case for your label[/] ({shown(why)}{more})")
    texts = [("Question", judgment.question), ("Reference", judgment.reference)]
    if judgment.answer_b is None:
        texts.append(("Answer", judgment.answer))
    else:
        texts += [("Answer A", judgment.answer), ("Answer B", judgment.answer_b)]
    for name, text in texts:
        console.print(f"[bold]{name}[/]")
        console.print(shown(text or "(empty)"), soft_wrap=False)
    if (passages := context_of(judgment.context)) is not None:
        console.print(f"[bold]Retrieved context[/] ({len(passages)} {plural(len(passages), 'passage')})")
        for number, passage in enumerate(passages, 1):
            console.print(f"[{number}] {shown(passage)}")
        if not passages:
            console.print("no passage was retrieved")
    if offered.blind:
        console.print("[dim]Blind review: the judge's verdict is shown once your label is saved.[/]")
    else:
        console.print(f"[bold]The judge said[/] {verdict_line(judgment)}")
    console.print(f"[dim]{shown(judgment.rubric_name)} · judge {shown(judgment.judge_model)} · #{judgment.id}[/]")


def saved_line(judgment: Judgment, *, passed: bool | None, tag: str | None, pick: str | None = None) -> str:
    """What was saved of a case, and what the judge had said (shown only now in blind review)."""
    if pick is not None:
        said = "a tie" if pick == "tie" else f"{pick} is better"
        return f"Saved: you said {said} (#{judgment.id}). The judge said {verdict_line(judgment)}."
    yours = ", ".join(part for part in ("pass" if passed else "fail" if passed is not None else "",
                                        shown(tag) if tag else "") if part)
    side = ""
    if passed is not None and judgment.passed is not None:
        side = " You agree on pass/fail." if passed == judgment.passed else " You differ on pass/fail."
    return f"Saved your label of #{judgment.id} ({yours or 'nothing'}). The judge said {verdict_line(judgment)}.{side}"
