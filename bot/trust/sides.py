"""The two sides of a comparison read from the history, as `judgebot compare`, the web view and the Python API read
them: two runs, or two models under test of one run or of a channel's history, each case once, one rubric at a
time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from bot.errors import UsageError
from bot.trust.collector import collector_held

if TYPE_CHECKING:
    from bot.rubric import RubricSet
    from bot.store import Store
    from bot.trust.model_comparison import Graded, ModelComparison


def comparison(store: Store, rubrics: RubricSet, *, runs: Sequence[int] = (), models: Sequence[str] = (),
               run: int | None = None, channel: str | None = None, since: datetime | None = None,
               rubric: str | None = None) -> tuple[list[str], list[ModelComparison]]:
    """Two runs, or two models under test (of one run, or of a channel's history or the terminal's since a moment),
    paired on the same questions, one rubric at a time: (the two sides' names, each rubric's comparison). UsageError
    saying what to give when the sides are not two, or one of them holds no judged answer."""
    runs, models = list(runs), list(models)
    if (len(runs) == 2) == (len(models) == 2) or len(runs) not in (0, 2) or len(models) not in (0, 2):
        raise UsageError("compare two runs (`judgebot compare 12 15`) or two models under test (`judgebot compare "
                         "--model bot-v1 --model bot-v2 [--run ID | --channel ID] [--since 30d]`)")
    name = rubrics.get(rubric).name if rubric else None
    with collector_held():
        return _compared(store, runs, models, run=run, channel=channel, since=since, name=name)


def _compared(store: Store, runs: list[int], models: list[str], *, run: int | None, channel: str | None,
              since: datetime | None, name: str | None) -> tuple[list[str], list[ModelComparison]]:
    """`comparison` of sides already named right."""
    from bot.store import graded_answers
    from bot.trust.model_comparison import compare as compared
    from bot.trust.model_comparison import graded

    if runs:
        sides = [graded(graded_answers(store, run_id=one, rubric_name=name)) for one in runs]
        names = [f"run {one}" for one in runs]
    else:
        sides = [graded(graded_answers(store, run_id=run, channel_id=channel, model=model, since=since,
                                       rubric_name=name)) for model in models]
        names = list(models)
    if not all(sides):
        empty = [name for name, side in zip(names, sides, strict=True) if not side]
        raise UsageError(f"no judged answers of {', '.join(empty)} here: `judgebot runs` lists the runs; a model is "
                         "named as in the file's model column")
    if runs:
        one_rubric_and_model(runs, sides)
    return names, compared(sides[0], sides[1])


def one_rubric_and_model(runs: list[int], sides: list[list[Graded]]) -> None:
    """Two runs are compared when they were graded with one rubric and each holds one model's answers; else a
    sentence saying what differs."""
    names = [f"run {run}" for run in runs]
    rubrics = [sorted({row.rubric for row in side}) for side in sides]
    if rubrics[0] != rubrics[1]:
        raise UsageError(f"{names[0]} was graded with rubric {', '.join(rubrics[0])} and {names[1]} with "
                         f"{', '.join(rubrics[1])}: answers are compared on one rubric, so judge both files with the "
                         "same --rubric")
    for run, side in zip(runs, sides, strict=True):
        held = sorted({row.model or "(no model)" for row in side})
        if len(held) > 1:
            raise UsageError(f"run {run} holds the answers of {len(held)} models under test ({', '.join(held)}): compare "
                             f"two of them with `judgebot compare --model A --model B --run {run}`; two "
                             "runs are compared when each holds one model's answers")
