"""The weekly digest says how far the judges agree among themselves on the rows judged several times: Krippendorff's
alpha per rubric, in Slack and the terminal, from the channel's own rows."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from bot.cli.views.history import show_digest
from bot.digest import Period, build_digest
from bot.records import Verdict
from bot.slack.views.digest import digest_message
from bot.store import Store, add_rows, create_run, iter_judgments, save_sample, save_verdict

COMMON = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h" * 16, "judge_model": "judge-m"}
SCORES = {"Correct": (2, 2, 100.0), "Generic": (0, 1, 25.0)}


def verdict(tag: str, samples: int | None = None) -> Verdict:
    correctness, completeness, headline = SCORES[tag]
    output = {"correctness": correctness, "completeness": completeness, "result_tag": tag, "reasoning": "r"}
    return Verdict(status="scored", output=output, headline=headline, passed=tag == "Correct", label=tag, tag=tag,
                   raw_reply="{}", prompt_hash="p" * 32, samples=samples, **COMMON)


def sampled_rows(store: Store, pairs: list[tuple[str, str]], *, channel: str) -> None:
    """One run of rows each judged twice by one judge, the samples' tags as given."""
    run = create_run(store, **COMMON, channel_id=channel, team_id="T1", samples=2)
    add_rows(store, [{**COMMON, "run_id": run.id, "row_number": n, "status": "pending", "question": f"q{n}",
                     "reference": "r", "answer": "a", "channel_id": channel, "team_id": "T1"}
                    for n in range(1, len(pairs) + 1)])
    for row, tags in zip(iter_judgments(store, run.id), pairs, strict=True):
        for number, tag in enumerate(tags, 1):
            assert save_sample(store, judgment_id=row.id, run_id=run.id, judge_model="judge-m", sample=number,
                               verdict=verdict(tag), cache_key=f"s{row.id}-{number}")
        assert save_verdict(store, row.id, verdict(tags[0], samples=2), cache_key=f"k{row.id}")


def test_the_digest_gives_alpha_among_the_samples_per_rubric(store: Store, rubrics) -> None:
    sampled_rows(store, [("Correct", "Correct"), ("Correct", "Generic"), ("Generic", "Generic")], channel="C1")
    sampled_rows(store, [("Correct", "Generic")] * 4, channel="C2")  # another channel's rows are not these
    digest = build_digest(store, channel_id="C1", period=Period.ending(datetime.now(UTC)), team_id="T1")
    # By hand: 3 units of 2 values, C=3 and G=3 paired; observed 2 (the split row), expected 36 - 18 = 18;
    # alpha = 1 - (6 - 1) * 2 / 18 = 0.44; the headlines (100, 25) split the same way: 0.44 too
    [(name, alphas, tagged)] = digest.alphas
    assert (name, tagged, alphas.jury) == ("eth", True, False)
    said = "among the samples: tag 0.44 (3 rows), headline 0.44 (3 rows)"
    assert alphas.text(tagged) == said
    assert said in str(digest_message(digest, rubrics, None, weekly=True)["blocks"])
    console = Console(file=io.StringIO(), width=200)
    show_digest(console, digest, "C1")
    assert f"Judges among themselves, eth: {said}" in console.file.getvalue()  # type: ignore[attr-defined]
