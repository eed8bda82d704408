"""`judgebot compare`: two models under test paired on the same questions, with figures computed by hand (the sign
test and McNemar's exact binomial, the seeded bootstrap of the paired mean)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.cli import flat, judgebot, write_rows
from tests.support.scripted_judge import Script

# q1..q6 answered by bot-v1 and bot-v2; eth headlines: Correct 100, Generic 25, Refusal 0
V1 = {"q1": "Correct", "q2": "Correct", "q3": "Generic", "q4": "Generic", "q5": "Refusal", "q6": "Correct"}
V2 = {"q1": "Correct", "q2": "Generic", "q3": "Correct", "q4": "Correct", "q5": "Correct", "q6": "Correct"}
HEADLINE = {"Correct": 100.0, "Generic": 25.0, "Refusal": 0.0}


def test_compare_two_models_of_a_run_with_figures_computed_by_hand(tmp_path: Path, judge_server) -> None:
    plan = {f"v1 says {q}": [tag] for q, tag in V1.items()} | {f"v2 says {q}": [tag] for q, tag in V2.items()}
    judge_server.responder = Script({"judge-cli": plan})
    rows = [[q, "Use myStudies.", f"v1 says {q}", "bot-v1"] for q in V1]
    rows += [[f"  {q} ", "Use  myStudies.", f"v2 says {q}", "bot-v2"] for q in V2]  # paired whatever the spacing
    rows.append(["q7", "Use myStudies.", "v2 says q7", "bot-v2"])  # v2 only: named, not dropped silently
    plan["v2 says q7"] = ["Correct"]
    write_rows(tmp_path / "both.csv", ["question", "reference", "answer", "model"], rows)
    code, out = judgebot(tmp_path, "judge", "both.csv", "--rubric", "eth", server=judge_server)
    assert code == 0, out
    assert "bot-v2 against bot-v1: 6 questions answered by both" in flat(out)  # in the run's own summary too

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v2", "--run", "1")
    text = flat(out)
    assert code == 0, out
    differences = [HEADLINE[V2[q]] - HEADLINE[V1[q]] for q in V1]  # 0, -75, +75, +75, +100, 0
    assert "bot-v2 against bot-v1: 6 questions answered by both" in text
    assert "1 answered by bot-v2 only, left out: q7" in text
    # the seeded percentile bootstrap of the paired mean (2,000 resamples of the 6 questions)
    values = np.asarray(differences)
    draws = np.random.default_rng(20260101).integers(0, 6, size=(2000, 6))
    low, high = np.percentile(values[draws].mean(axis=1), [2.5, 97.5])
    assert (f"mean headline: bot-v1 58.3, bot-v2 87.5; paired difference +29.2, 95% CI {low:+.1f} to {high:+.1f}"
            in text)
    # 3 higher, 2 equal, 1 lower: exact two-sided binomial, n = 4, 2 * (1 + 4) / 16 = 0.625
    assert "bot-v2 higher on 3, equal on 2, lower on 1 (sign test p = 0.62)" in text
    # pass/fail: q3, q4, q5 pass only with v2; q2 only with v1: McNemar exact, the same 0.625
    assert "pass/fail: 3 pass only with bot-v2, 1 only with bot-v1 (McNemar p = 0.62)" in text
    assert "tags, bot-v1 -> bot-v2: Correct -> Correct 2, Generic -> Correct 2," in text
    assert "Correct -> Generic 1" in text and "Refusal -> Correct 1" in text
    assert "biggest regressions: -75 (100 -> 25) q2" in text and "biggest improvements: +100 (0 -> 100) q5" in text
    assert "paired difference +29.2 over the 6 pairs of similar length" in text

    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1")
    assert code == 2 and "compare two runs" in flat(out)
    code, out = judgebot(tmp_path, "compare", "--model", "bot-v1", "--model", "bot-v9")
    assert code == 2 and "no scored answers of bot-v9" in flat(out)
