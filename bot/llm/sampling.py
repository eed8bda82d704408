"""What a known judge model accepts before it is asked: the reasoning efforts it takes, the effort judgebot asks of it
when none is set, and whether a temperature may go with them (a reasoning model refuses one unless its effort is
"none")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from bot.errors import SetupError

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
# The effort a known reasoning judge is asked for when no setting names one: a little thought before the verdict
# (comparing an answer with its reference, one claim at a time) at a few hundred tokens a row, where "medium" (GPT-6's
# own default) thinks several times longer for the same verdicts on short rubric judgments. docs/judges.md says why.
JUDGING_EFFORT: Effort = "low"
# A rough prior of the reasoning tokens one rubric judgment takes at each effort, for an estimate before the history
# holds any of that judge's replies under the rubric (then what they took is used instead). Reasoning is billed as
# output, so at "medium" and above it outweighs the reply itself: the prior leans high rather than low.
REASONING_PRIOR: dict[Effort, int] = {"none": 0, "minimal": 50, "low": 250, "medium": 800, "high": 2500,
                                      "xhigh": 6000, "max": 12000}


def parse_effort(text: str, where: str) -> Effort:
    """`text` as a reasoning effort; SetupError naming `where` (a setting, a judge) and the efforts there are."""
    word = text.strip().lower()
    for effort in EFFORTS:
        if word == effort:
            return effort
    raise SetupError(f"{where}: {text!r} is not a reasoning effort; use one of {', '.join(EFFORTS)}")


@dataclass(frozen=True)
class ModelRules:
    """The reasoning rules of one model as its provider lists them: the efforts it accepts and the one it uses when
    none is sent (None when its page does not say)."""

    model: str
    efforts: tuple[Effort, ...]
    default: Effort | None = None

    def effort_for(self, asked: Effort | None, where: str = "JUDGE_REASONING_EFFORT") -> Effort | None:
        """The effort to send for `asked` (from `where`): `asked` when the model accepts it (SetupError naming the
        efforts it does accept when it does not), else JUDGING_EFFORT when it accepts that, else None (its own)."""
        if asked is not None:
            if asked not in self.efforts:
                raise SetupError(f"{where}: the judge {self.model} does not accept reasoning effort {asked!r} (it "
                                 f"accepts {', '.join(self.efforts)}); choose one of those")
            return asked
        return JUDGING_EFFORT if JUDGING_EFFORT in self.efforts else None

    def takes_sampling(self, effort: Effort | None) -> bool:
        """Whether temperature, top_p and logprobs may be sent with `effort` (None: the model's default): only when
        the model does not reason, which is effort "none"."""
        return (effort or self.default) == "none"
