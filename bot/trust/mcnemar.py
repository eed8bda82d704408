"""McNemar's test of whether the judge and people pass as often as each other, over the labels where they differ."""

from __future__ import annotations

import math
from collections.abc import Sequence

EXACT_BELOW = 25  # fewer discordant labels than this: the exact binomial test, else chi-square


def chi2_sf(statistic: float) -> float:
    """The upper tail of the chi-square distribution with one degree of freedom."""
    return math.erfc(math.sqrt(max(statistic, 0.0) / 2))


def mcnemar_p(judge_only: int, human_only: int) -> float:
    """The two-sided p-value of McNemar's test from the labels where only the judge passed (`judge_only`) and those
    where only the person did: exact binomial below EXACT_BELOW such labels, else chi-square with continuity
    correction (as statsmodels' mcnemar decides with exact=True and exact=False). 1.0 when they never differ."""
    discordant = judge_only + human_only
    if discordant < EXACT_BELOW:
        tail = sum(math.comb(discordant, k) for k in range(min(judge_only, human_only) + 1)) / 2 ** discordant
        return min(1.0, 2 * tail)
    return chi2_sf((abs(judge_only - human_only) - 1) ** 2 / discordant)


def clustered_mcnemar_p(by_case: Sequence[tuple[int, int]]) -> float:
    """McNemar's test where several people labeled some case: each case's (only the judge passed, only the person
    passed) counts, in Durkalski et al.'s statistic (2003), which is McNemar's without continuity correction when
    every case has one label. 1.0 when the judge and people never differ."""
    differences = [judge_only - human_only for judge_only, human_only in by_case]
    spread = sum(difference * difference for difference in differences)
    if spread == 0:
        return 1.0
    return chi2_sf(sum(differences) ** 2 / spread)


def p_text(p: float) -> str:
    """"p < 0.001", "p = 0.004", "p = 0.03"."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}" if p < 0.01 else f"p = {p:.2f}"
