"""Intervals from resampling cases: where several people labeled the same case, their labels are not independent, so
agreement and kappa are recomputed over cases drawn with replacement, each with all its labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 2000
SEED = 20260101  # every bootstrap draws the same way, so the same labels always give the same interval
CHUNK = 250  # resamples drawn at a time: memory grows with this times the cases


def resampled_tables(cases: Sequence[Sequence[Sequence[int]]], resamples: int = RESAMPLES, seed: int = SEED
                     ) -> np.ndarray:
    """The (judge, human) count tables of `resamples` resamples of `cases` (each a table of its own labels' counts,
    all of one size k x k), as an array of shape (resamples, k, k)."""
    import numpy as np  # loaded only when some case has several labels

    tables = np.asarray(cases, dtype=float)
    count, size = tables.shape[0], tables.shape[1]
    flat = tables.reshape(count, size * size)
    rng = np.random.default_rng(seed)
    drawn = []
    for start in range(0, resamples, CHUNK):
        weights = rng.multinomial(count, np.full(count, 1.0 / count), size=min(CHUNK, resamples - start))
        drawn.append(weights @ flat)  # how often each case was drawn, times its counts
    return np.concatenate(drawn).reshape(resamples, size, size)


def _percentile(values: np.ndarray) -> tuple[float, float] | None:
    import numpy as np

    defined = values[~np.isnan(values)]
    if not defined.size:
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return float(low), float(high)


def agreement_interval(tables: np.ndarray) -> tuple[float, float] | None:
    """The 95 % percentile interval of agreement (the diagonal's share) over resampled tables."""
    import numpy as np

    totals = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return _percentile(np.trace(tables, axis1=1, axis2=2) / totals)


def kappa_interval(tables: np.ndarray, weights: Sequence[Sequence[float]] | None = None) -> tuple[float, float] | None:
    """The 95 % percentile interval of Cohen's kappa over resampled tables (with agreement `weights`, k x k, for a
    weighted kappa), leaving out the resamples where it is undefined (a side used one class only)."""
    import numpy as np

    size = tables.shape[1]
    grid = np.eye(size) if weights is None else np.asarray(weights, dtype=float)
    totals = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = tables / totals[:, None, None]
        judge, human = shares.sum(axis=2), shares.sum(axis=1)
        observed = (shares * grid).sum(axis=(1, 2))
        chance = np.einsum("bi,bj,ij->b", judge, human, grid)
        kappa = (observed - chance) / (1 - chance)
    one_class = ((judge > 0).sum(axis=1) < 2) | ((human > 0).sum(axis=1) < 2)
    kappa[one_class] = np.nan
    return _percentile(kappa)
