"""A Bradley-Terry ranking of several models from pairs judged between them: ratings on the Elo scale by Hunter's MM
algorithm (ties a half win each way, a virtual tie between every two models), with sandwich-variance intervals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.trust.stats.intervals import Z95

BT_PRIOR = 0.5  # a virtual tie of this weight between every two models keeps a model that always wins finite
BT_ITERATIONS = 500
BT_TOLERANCE = 1e-9
RATING_BASE, RATING_SCALE = 1000.0, 400.0  # ratings on the Elo scale: 400 points are 10:1 odds of winning
RATING_MIN_PAIRS = 20  # pairs in each of a model's matchups before its rating gets an interval


@dataclass(frozen=True)
class Rated:
    """One model's Bradley-Terry rating (Elo scale) with its 95% interval, and its record."""

    model: str
    rating: float
    interval: tuple[float, float] | None
    pairs: int
    wins: float  # ties counted a half


def _strengths(wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry strengths by Hunter's MM algorithm, for one table of wins (k x k, row beat column) or a stack
    of them (r x k x k); each set of strengths has a geometric mean of 1."""
    wins = wins + BT_PRIOR / 2 * (1 - np.eye(wins.shape[-1]))  # a virtual tie: half a win each way
    games = wins + np.swapaxes(wins, -1, -2)
    won = wins.sum(axis=-1)
    strength = np.ones(wins.shape[:-1])
    for _ in range(BT_ITERATIONS):
        pairs_sum = strength[..., :, None] + strength[..., None, :]
        new = won / (games / pairs_sum).sum(axis=-1)
        new /= np.exp(np.log(new).mean(axis=-1, keepdims=True))
        if np.max(np.abs(new - strength)) < BT_TOLERANCE:
            return new
        strength = new
    return strength


def rating(strength: np.ndarray) -> np.ndarray:
    """Strengths on the Elo scale."""
    return RATING_BASE + RATING_SCALE * np.log10(strength)


def ranking(pairs: Sequence[tuple[str, str, float]]) -> list[Rated]:
    """The models ranked by their Bradley-Terry rating, from (model A, model B, B's score: 1 a win, 0.5 a tie, 0 a
    loss) pairs, with 95% Wald intervals from the sandwich variance over the pairs, for the models each of whose
    matchups holds RATING_MIN_PAIRS pairs (fewer: no interval held its coverage)."""
    names = sorted({name for a, b, _ in pairs for name in (a, b)})
    index = {name: number for number, name in enumerate(names)}
    games = np.array([(index[a], index[b], outcome) for a, b, outcome in pairs], dtype=float).reshape(-1, 3)
    first, second, score = games[:, 0].astype(int), games[:, 1].astype(int), games[:, 2]
    wins = np.zeros((len(names), len(names)))
    np.add.at(wins, (second, first), score)  # B's score is a win of b over a, A's of a over b
    np.add.at(wins, (first, second), 1 - score)
    strength = _strengths(wins)
    errors = _rating_errors(first, second, score, wins, strength)
    met = wins + wins.T
    record: Counter[str] = Counter()
    won: dict[str, float] = dict.fromkeys(names, 0.0)
    for a, b, outcome in pairs:
        record.update((a, b))
        won[b] += outcome
        won[a] += 1 - outcome
    ratings = rating(strength)
    rated = []
    for i, name in enumerate(names):
        enough = all(pairs >= RATING_MIN_PAIRS for pairs in met[i][met[i] > 0])
        interval = (float(ratings[i] - Z95 * errors[i]), float(ratings[i] + Z95 * errors[i])) if enough else None
        rated.append(Rated(name, float(ratings[i]), interval, record[name], won[name]))
    return sorted(rated, key=lambda item: (-item.rating, item.model))


def _rating_errors(first: np.ndarray, second: np.ndarray, score: np.ndarray, wins: np.ndarray,
                   strength: np.ndarray) -> np.ndarray:
    """The standard error of each rating on the Elo scale: the sandwich (robust) variance of the log-strengths,
    the likelihood's curvature (with the virtual ties) around the pairs' own spread, so a tie varies as little as it
    does; their geometric mean is held at 1."""
    size, count = len(strength), len(score)
    games = wins + BT_PRIOR / 2 * (1 - np.eye(size))
    games = games + games.T
    beats = strength[:, None] / (strength[:, None] + strength[None, :])  # beats[i, j]: the chance i beats j
    information = games * beats * beats.T
    np.fill_diagonal(information, 0.0)
    bread = np.linalg.pinv(np.diag(information.sum(axis=1)) - information)
    residual = score - beats[second, first]  # B's score less its expectation
    scores = np.zeros((count, size))
    np.add.at(scores, (np.arange(count), second), residual)
    np.add.at(scores, (np.arange(count), first), -residual)
    meat = scores.T @ scores * (count / (count - 1) if count > 1 else 1.0)
    variance = np.clip(np.diag(bread @ meat @ bread), 0.0, None)
    return RATING_SCALE / np.log(10) * np.sqrt(variance)
