"""calibrate counts each figure's cases in one pass: held, to the bit, to the figures of building each figure's cases
one by one (tests/support/case_by_case.py, as calibrate did before), on random sets of labels that have everything
that moves a sum over cases (several people's labels of a case, labels without a case, shares of a third, values
that are no whole numbers, -0.0, a case labeled in two weeks)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.trust.calibration import LabeledVerdict, VerdictRow, calibrate
from bot.trust.stats.case_tables import CaseTables
from bot.trust.stats.kappa import alike
from tests.support.case_by_case import calibrated_case_by_case

TAGS = ("Correct", "Generic", "Refusal", "Hallucination")
CRITERIA = ("correctness", "nested.depth", "ratio")
SCALES = {"correctness": [0, 1, 2], "nested.depth": [0, 1, 2, 3]}
START = datetime(2026, 11, 2, 8, 0)


def _value(rng: random.Random, path: str) -> float:
    if path == "ratio":  # a number: tenths and thirds, whose sums round
        return rng.choice([0.1, 0.2, 0.7, 1 / 3, 2 / 3, -0.0, 0.0, 1.25])
    return float(rng.randrange(0, 4 if path == "nested.depth" else 3))


def labels(rng: random.Random) -> list[VerdictRow]:
    """A random set: up to 40 cases, some labeled by up to five people (or voted on) over three weeks."""
    cases = [f"{rng.getrandbits(64):016x}" for _ in range(rng.randrange(1, 40))]
    found = []
    for _ in range(rng.randrange(0, 120)):
        judge_values = {path: _value(rng, path) for path in CRITERIA if rng.random() < 0.7}
        human_values = {path: _value(rng, path) for path in CRITERIA if rng.random() < 0.6}
        found.append(VerdictRow(
            judge_passed=rng.choice([True, False, None]) if rng.random() < 0.2 else rng.random() < 0.6,
            judge_tag=rng.choice([*TAGS, None]), judge_values=judge_values,
            human_passed=rng.choice([True, False, None]) if rng.random() < 0.2 else rng.random() < 0.5,
            human_tag=rng.choice([*TAGS, None, "Unheard of"]), human_values=human_values,
            labeled_at=START + timedelta(hours=rng.randrange(0, 21 * 24)),
            judge_model=rng.choice(["judge-a", "judge-b"]), rubric_hash=rng.choice(["h1", "h2", "h3"]),
            case=None if rng.random() < 0.15 else rng.choice(cases)))
    return sorted(found, key=lambda row: row.labeled_at)


def test_every_figure_is_that_of_the_cases_built_one_by_one_to_the_bit() -> None:
    rng = random.Random(46)
    clustered = thirds = 0
    for _ in range(400):
        given = labels(rng)
        options = {"tags": TAGS if rng.random() < 0.8 else (), "criteria": CRITERIA[:rng.randrange(0, 4)],
                   "scales": SCALES if rng.random() < 0.8 else None}
        counted, one_by_one = calibrate(given, **options), calibrated_case_by_case(given, **options)
        assert counted.model_dump_json() == one_by_one.model_dump_json()  # floats as repr: every bit
        assert counted == one_by_one
        clustered += counted.clustered
        thirds += any(gap.mean_abs % 1 and gap.cases < gap.n for gap in counted.gaps.values())
    assert clustered > 300 and thirds > 50  # the sets had what moves a sum


def test_validated_labels_are_counted_alike() -> None:
    rng = random.Random(7)
    for _ in range(50):
        given = labels(rng)
        models = [LabeledVerdict.model_construct(**row._asdict()) for row in given]
        at_noon = [row._replace(labeled_at=row.labeled_at.replace(tzinfo=UTC)) for row in given]
        assert calibrate(models, tags=TAGS, criteria=CRITERIA) == calibrate(given, tags=TAGS, criteria=CRITERIA)
        assert calibrate(at_noon, tags=TAGS) == calibrated_case_by_case(at_noon, tags=TAGS)


def test_case_tables_are_alike_of_the_cases_tables() -> None:
    rng = random.Random(3)
    for _ in range(200):
        cases = [[(rng.random() < 0.5, rng.random() < 0.5) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
                 for _ in range(rng.randrange(0, 60))]
        tables, counted = [], CaseTables[bool]()
        for pairs in cases:
            table: dict[tuple[bool, bool], int] = {}
            for pair in pairs:
                table[pair] = table.get(pair, 0) + 1
            tables.append(table)
            if len(pairs) == 1 and rng.random() < 0.5:
                counted.one(pairs[0])
            else:
                assert counted.add(pairs) == table
        assert counted.tables() == alike(tables)
        assert counted.cases == len(cases)
        assert counted.pairs() == {pair: sum(table.get(pair, 0) for table in tables)
                                   for pair in {pair for table in tables for pair in table}}
