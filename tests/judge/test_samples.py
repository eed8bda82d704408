"""Samples and juries: the medoid verdict and its agreement, every sample kept and billed once, juries across two
local endpoints, and what the CLI shows and writes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.config import Settings
from bot.errors import SetupError
from bot.judge.panel import Panel, check_samples, judges_from_names, open_panel, panel_name, read_judges
from bot.judge.samples import Sampled, medoid, split_text
from bot.judge.verdicts import combine
from bot.records import RowState, RunState, Verdict
from bot.runs import Progress, execute_run, start_run
from bot.store import Store, iter_judgments, samples_of
from tests.support.cli import flat, history, judgebot, read_results, write_rows
from tests.support.openai_server import FakeJudgeServer, Reply
from tests.support.replies import VERDICTS, eth_reply, triple_of
from tests.support.scripted_judge import Script, rows_of

PROVENANCE = {"rubric_name": "eth", "rubric_version": "1.0", "rubric_hash": "h", "judge_model": "j", "prompt_hash": "p"}


def scored(tag: str, *, tokens: int = 10) -> Verdict:
    correctness, completeness = VERDICTS[tag]
    return Verdict(status=RowState.SCORED, output={"result_tag": tag}, headline=(correctness + completeness) * 25,
                   passed=tag == "Correct", tag=tag, label=tag, tokens_in=tokens, tokens_out=1, **PROVENANCE)


def failed(status: RowState, error: str) -> Verdict:
    return Verdict(status=status, error=error, tokens_in=5, **PROVENANCE)


def sampled(*verdicts: Verdict) -> list[Sampled]:
    return [Sampled("j", number, verdict) for number, verdict in enumerate(verdicts, start=1)]


# --- the medoid and its figures -------------------------------------------------------------------------------


def test_agreeing_samples_give_their_verdict_with_full_agreement() -> None:
    row = combine(sampled(scored("Correct"), scored("Correct"), scored("Correct")), judge_model="j")
    assert (row.status, row.tag, row.samples, row.agreement, row.spread, row.unsure) == (
        RowState.SCORED, "Correct", 3, 1.0, 0.0, False)
    assert (row.tokens_in, row.tokens_out) == (30, 3)  # every sample is billed


def test_a_split_takes_the_majority_and_is_unsure() -> None:
    # Generic (headline 25) twice, Correct (100) once: a Generic is closest to the others
    verdicts = [scored("Correct"), scored("Generic"), scored("Generic")]
    row = combine(sampled(*verdicts), judge_model="j")
    assert row.tag == "Generic" and row.headline == 25 and row.passed is False
    assert row.agreement == pytest.approx(2 / 3, abs=1e-4) and row.spread == 75 and row.unsure is True
    assert split_text(verdicts) == "2/1: Generic, Correct"


def test_the_medoid_is_a_sample_in_the_middle_not_an_average() -> None:
    # headlines 0, 25, 25 apart from tags: Refusal(0), Generic(25), Hallucination(0); distances summed:
    # Refusal: 0.25+1+1 to Generic, 0+0+1 to Hallucination = 3.25; Generic: 2.25 + 0.25+0+1 = 3.5; Hallucination: 1 + 2.25 = 3.25
    verdicts = [scored("Refusal"), scored("Generic"), scored("Hallucination")]
    assert medoid(verdicts) == 0  # the first of the two closest
    row = combine(sampled(*verdicts), judge_model="j")
    assert row.tag == "Refusal" and row.agreement == pytest.approx(1 / 3, abs=1e-4) and row.unsure is True


def test_an_even_split_takes_the_lower_headline_whatever_the_order_and_says_so() -> None:
    # Correct (100) twice and Generic (25) twice: no majority; the sample order decided it before
    for order in ([scored("Correct"), scored("Correct"), scored("Generic"), scored("Generic")],
                  [scored("Generic"), scored("Correct"), scored("Generic"), scored("Correct")]):
        row = combine(sampled(*order), judge_model="j")
        assert (row.tag, row.headline, row.passed, row.agreement, row.unsure) == ("Generic", 25, False, 0.5, True)
        assert split_text(order) == "2/2: Generic, Correct (even: the lower headline taken)"
    # a majority is not an even split: its medoid stands, and nothing more is said
    majority = [scored("Correct"), scored("Correct"), scored("Generic")]
    assert combine(sampled(*majority), judge_model="j").tag == "Correct"
    assert split_text(majority) == "2/1: Correct, Generic"


def test_a_wide_spread_alone_makes_a_row_unsure() -> None:
    low = scored("Generic").model_copy(update={"headline": 30.0})
    high = scored("Generic").model_copy(update={"headline": 60.0})
    assert combine(sampled(low, high, low), judge_model="j").unsure is True  # 30 points >= 25
    assert combine(sampled(low, high, low), judge_model="j", unsure_spread=31).unsure is False


def test_most_samples_failing_makes_the_row_an_error_naming_the_count() -> None:
    row = combine(sampled(scored("Correct"), failed(RowState.ERROR, "timeout"), failed(RowState.INVALID, "bad")),
                  judge_model="j")
    assert row.status == RowState.ERROR and row.headline is None and row.tag is None and row.output is None
    assert row.error == "2 of 3 samples failed; the first: timeout"
    invalid = combine(sampled(failed(RowState.INVALID, "no json"), failed(RowState.INVALID, "rule"),
                              scored("Correct")), judge_model="j")
    assert invalid.status == RowState.INVALID and invalid.error == "2 of 3 samples failed; the first: no json"
    # two of three scored: the row is scored, the failure counted by the samples
    two = combine(sampled(scored("Correct"), failed(RowState.ERROR, "x"), scored("Correct")), judge_model="j")
    assert two.status == RowState.SCORED and two.agreement == 1.0 and two.samples == 3


def test_samples_and_juries_are_checked() -> None:
    assert check_samples(9) == 9
    with pytest.raises(SetupError, match="from 1 to 9"):
        check_samples(10)
    with pytest.raises(SetupError, match="more than once"):
        judges_from_names("a,b,a")
    assert [spec.model for spec in judges_from_names(" a, b ,")] == ["a", "b"]
    long = panel_name(["m" * 100, "n" * 100])
    assert len(long) == 128 and long.startswith("m" * 100)


def test_a_judges_file_is_read_and_its_mistakes_named(tmp_path: Path) -> None:
    good = tmp_path / "judges.yaml"
    good.write_text("judges:\n  - model: a\n    base_url: http://127.0.0.1:1/v1\n    key_env: A_KEY\n  - model: b\n")
    assert [(s.model, s.base_url, s.key_env) for s in read_judges(good)] == [
        ("a", "http://127.0.0.1:1/v1", "A_KEY"), ("b", None, None)]
    bad = tmp_path / "bad.yaml"
    bad.write_text("- model: a\n  api_key: sk-secret\n")
    with pytest.raises(SetupError, match="judge 1: api_key: Extra inputs"):
        read_judges(bad)
    with pytest.raises(SetupError, match="A_KEY"):
        open_panel(Settings(_env_file=None, openai_base_url="http://127.0.0.1:1/v1"), specs=read_judges(good))


# --- judged through the real client and the store -------------------------------------------------------------


async def test_three_samples_are_kept_and_a_rerun_bills_none_again(store: Store, rubrics, judge_server,
                                                                   make_client) -> None:
    script = Script({"judge-test": {"steady": ["Correct"], "torn": ["Correct", "Generic", "Generic"]}})
    judge_server.responder = script
    rubric = rubrics.get("eth")
    panel = Panel([make_client(temperature=0.7)], samples=3)
    run = start_run(store, rubric=rubric, rows=rows_of("steady", "torn"), columns=["answer"], **panel.run_fields())
    assert (run.samples, run.judges, run.temperature) == (3, None, 0.7)

    events: list[Progress] = []
    outcome = await execute_run(store, run, rubric, panel, concurrency=4, on_progress=events.append)

    assert outcome.all_scored and len(judge_server.bodies()) == 6
    assert [(event.done, event.unsure) for event in events][-1] == (2, 1)  # progress counts the split row
    assert {body["temperature"] for body in judge_server.bodies()} == {0.7}
    steady, torn = list(iter_judgments(store, run.id))
    assert (steady.tag, steady.samples, steady.agreement, steady.unsure) == ("Correct", 3, 1.0, False)
    assert (torn.tag, torn.agreement, torn.spread, torn.unsure) == ("Generic", pytest.approx(0.6667), 75.0, True)
    assert torn.tokens_in == sum(sample.tokens_in for sample in samples_of(store, torn.id)) > 0
    kept = samples_of(store, torn.id)
    assert sorted(s.sample for s in kept) == [1, 2, 3] and Counter(s.tag for s in kept) == {"Generic": 2, "Correct": 1}

    again = start_run(store, rubric=rubric, rows=rows_of("steady", "torn"), columns=["answer"], **panel.run_fields())
    await execute_run(store, again, rubric, panel, concurrency=4)
    resumed: list[Progress] = []
    await execute_run(store, run, rubric, panel, concurrency=4, on_progress=resumed.append, statuses=(RunState.DONE,))
    assert (resumed[0].done, resumed[0].unsure) == (2, 1)  # a run taken up again starts from its saved split rows
    assert len(judge_server.bodies()) == 6  # each sample reused: nothing billed twice
    reused = list(iter_judgments(store, again.id))
    assert [row.tag for row in reused] == ["Correct", "Generic"] and all(row.cached_from for row in reused)
    assert all(row.tokens_in == 0 for row in reused)


async def test_a_jury_across_two_endpoints_and_a_stop_that_bills_nothing_twice(store: Store, rubrics, judge_server,
                                                                               make_client) -> None:
    other = FakeJudgeServer().start()
    try:
        judge_server.responder = Script({"alpha": {"a1": ["Correct"], "a2": ["Generic"]}})
        refused = {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}
        other.responder = lambda body: Reply(status=401, error=refused)
        rubric = rubrics.get("eth")
        panel = Panel([make_client(model="alpha"), make_client(model="beta", base_url=other.base_url)])
        run = start_run(store, rubric=rubric, rows=rows_of("a1", "a2"), columns=["answer"], **panel.run_fields())
        assert run.judge_model == "alpha+beta"

        stopped = await execute_run(store, run, rubric, panel, concurrency=1)

        assert stopped.status == "paused" and "rejected the key" in (stopped.stop_reason or "")
        alpha_billed = len(judge_server.bodies())
        assert alpha_billed >= 1
        first = next(iter_judgments(store, run.id))
        assert first.status == RowState.PENDING
        assert [(s.judge_model, s.tag) for s in samples_of(store, first.id)] == [("alpha", "Correct")]

        other.responder = Script({"beta": {"a1": ["Generic"], "a2": ["Generic"]}})
        done = await execute_run(store, run, rubric, panel, concurrency=1)

        assert done.all_scored
        rows = list(iter_judgments(store, run.id))
        # a1: alpha Correct (100) and beta Generic (25) split evenly: not the first judge's, but the lower headline
        assert (rows[0].tag, rows[0].unsure, rows[0].agreement) == ("Generic", True, 0.5)
        assert (rows[1].tag, rows[1].unsure) == ("Generic", False)
        billed = Counter(triple_of(body)[2] for body in judge_server.bodies())
        assert billed == {"a1": 1, "a2": 1}  # alpha's sample of a1 was kept through the stop, not asked again
    finally:
        other.stop()


async def test_retry_errors_asks_again_only_the_samples_that_failed(store: Store, rubrics, judge_server,
                                                                    make_client) -> None:
    calls = Counter[str]()

    def flaky(body: dict) -> Reply:
        calls[body["model"]] += 1
        if body["model"] == "beta" and calls["beta"] <= 2:  # the first request and its one retry
            return Reply.server_error()
        return eth_reply("Correct")

    judge_server.responder = flaky
    rubric = rubrics.get("eth")
    panel = Panel([make_client(model="alpha", max_retries=1), make_client(model="beta", max_retries=1)])
    run = start_run(store, rubric=rubric, rows=rows_of("x"), columns=["answer"], **panel.run_fields())
    await execute_run(store, run, rubric, panel, concurrency=1)
    row = next(iter_judgments(store, run.id))
    assert row.status == RowState.ERROR and row.error is not None and row.error.startswith("1 of 2 samples failed")

    await execute_run(store, run, rubric, panel, concurrency=1, rejudge=(RowState.ERROR,))

    row = next(iter_judgments(store, run.id))
    assert row.status == RowState.SCORED and row.agreement == 1.0
    assert calls["alpha"] == 1  # alpha's scored sample was kept
    assert sorted(s.judge_model for s in samples_of(store, row.id)) == ["alpha", "beta"]


# --- the CLI ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_samples_write_agreement_columns_and_list_unsure_rows(tmp_path: Path, judge_server) -> None:
    judge_server.responder = Script({"judge-cli": {"fine": ["Correct"], "torn": ["Correct", "Generic", "Generic"]}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [["q1", "Use myStudies.", "fine"], ["q2", "Use myStudies.", "torn"]])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--samples", "3", server=judge_server)

    assert code == 0, out
    text = flat(out)
    assert "samples 6" in text and "unsure rows 1: rows 3" in text
    fields, rows = read_results(tmp_path / "a.results.csv")
    assert fields[-4:] == ["samples", "agreement", "spread", "unsure"]
    assert [(r["samples"], r["agreement"], r["spread"], r["unsure"], r["result_tag"]) for r in rows] == [
        ("3", "1.0", "0.0", "false", "Correct"), ("3", "0.6667", "75.0", "true", "Generic")]
    assert history(tmp_path, "SELECT samples, temperature FROM run") == [(3, 0.7)]
    assert history(tmp_path, "SELECT COUNT(*) FROM judgment_sample") == [(6,)]

    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "q", "-r", "Use myStudies.", "-a", "torn",
                         "--samples", "3", server=judge_server)
    assert code == 0, out
    assert "3 samples · split 2/1: Generic, Correct" in out and "judge-cli #3" in out


@pytest.mark.slow
def test_cli_jury_with_samples_shows_each_members_own_sample_and_alpha_among_the_judges(tmp_path: Path,
                                                                                          judge_server) -> None:
    judge_server.responder = Script({
        "alpha": {"x1": ["Correct", "Generic"], "x2": ["Correct"], "x3": ["Generic"], "x4": ["Hallucination"],
                  "x5": ["Refusal"], "x6": ["Correct"]},
        "beta": {"x1": ["Correct"], "x2": ["Correct"], "x3": ["Refusal"], "x4": ["Hallucination"], "x5": ["Refusal"],
                 "x6": ["Generic"]}})
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"],
                        [[f"q{n}", "Use myStudies.", f"x{n}"] for n in range(1, 7)])

    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--judges", "alpha,beta", "--samples", "2",
                         "--concurrency", "1", server=judge_server)

    assert code == 0, out
    fields, rows = read_results(tmp_path / "a.results.csv")
    members = [(r["alpha tag"], r["alpha headline"], r["beta tag"], r["beta headline"], r["result_tag"]) for r in rows]
    assert members == [
        # x1: alpha split its own two samples evenly: its column shows its stricter sample, Generic 25, not a mean of
        # 62.5 beside "Correct"; the row, 3 Correct against 1 Generic, is Correct
        ("Generic", "25.0", "Correct", "100.0", "Correct"),
        ("Correct", "100.0", "Correct", "100.0", "Correct"),
        ("Generic", "25.0", "Refusal", "0.0", "Refusal"),  # 2/2 between the judges: the lower headline
        ("Hallucination", "0.0", "Hallucination", "0.0", "Hallucination"),
        ("Refusal", "0.0", "Refusal", "0.0", "Refusal"),
        ("Correct", "100.0", "Generic", "25.0", "Generic"),
    ]
    # Krippendorff's alpha between the two members' columns, from krippendorff.alpha(reliability_data=...):
    # nominal on the tags 0.37735849056603776, interval on the headlines 0.528216704288939, over the 6 rows
    assert "Krippendorff's alpha among the judges: tag 0.38 (6 rows), headline 0.53 (6 rows)" in flat(out), out

    code, out = judgebot(tmp_path, "judge", "--rubric", "eth", "-q", "q3", "-r", "Use myStudies.", "-a", "x3",
                         "--judges", "alpha,beta", "--samples", "2", "--fresh", server=judge_server)
    assert code == 0 and "split 2/2: Refusal, Generic (even: the lower headline taken)" in flat(out), out


@pytest.mark.slow
def test_cli_jury_from_a_file_across_endpoints_with_member_columns(tmp_path: Path, judge_server) -> None:
    other = FakeJudgeServer().start()
    try:
        judge_server.responder = Script({"alpha": {"x": ["Correct"]}})
        other.responder = Script({"beta": {"x": ["Generic"]}})
        jury = tmp_path / "jury.yaml"
        jury.write_text(f"- model: alpha\n- model: beta\n  base_url: {other.base_url}\n  key_env: BETA_KEY\n")
        source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"], [["q", "Use myStudies.", "x"]])

        code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--judges-file", jury, server=judge_server,
                             BETA_KEY="beta-secret", OPENAI_API_KEY="main-secret")

        assert code == 0, out
        fields, rows = read_results(tmp_path / "a.results.csv")
        assert fields[-8:] == ["samples", "agreement", "spread", "unsure", "alpha headline", "alpha tag",
                               "beta headline", "beta tag"]
        row = rows[0]
        assert (row["alpha tag"], row["beta tag"], row["alpha headline"], row["beta headline"]) == (
            "Correct", "Generic", "100.0", "25.0")
        assert (row["judge_model"], row["unsure"], row["agreement"]) == ("alpha+beta", "true", "0.5")
        assert "unsure rows 1: rows 2" in flat(out)
        # each endpoint got its own key, never the other's
        assert {b.get("model") for b in other.bodies()} == {"beta"}
        assert history(tmp_path, "SELECT judge_model FROM run") == [("alpha+beta",)]
    finally:
        other.stop()


@pytest.mark.slow
def test_cli_refuses_bad_sample_counts_and_two_kinds_of_jury(tmp_path: Path, judge_server) -> None:
    source = write_rows(tmp_path / "a.csv", ["question", "reference", "answer"], [["q", "r", "a"]])
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--samples", "12", server=judge_server)
    assert code == 2 and "samples must be from 1 to 9, not 12" in out
    code, out = judgebot(tmp_path, "judge", source, "--rubric", "eth", "--judges", "a,b", "--judges-file", "j.yaml",
                         server=judge_server)
    assert code == 2 and "not both" in out
    assert judge_server.bodies() == []


@pytest.mark.slow
def test_a_run_killed_between_the_samples_of_a_row_bills_none_of_them_twice(tmp_path: Path, judge_server) -> None:
    import random

    from tests.support.cli import Billing
    from tests.support.kills import count, kill_when

    billing, delays = Billing(), random.Random(7)

    def slow_and_uneven(body: dict) -> Reply:  # a row's samples land at different times
        reply = billing(body)
        return Reply(content=reply.content, delay=delays.uniform(0.05, 0.4))

    judge_server.responder = slow_and_uneven
    rows = [[f"question {i}?", "See myStudies.", f"Answer {i}: myStudies."] for i in range(12)]
    write_rows(tmp_path / "in.csv", ["question", "reference", "answer"], rows)
    def between_samples() -> bool:  # a row has some of its samples saved, not all
        saved = count(tmp_path, "SELECT COUNT(*) FROM judgment_sample")
        return saved >= 4 and saved % 3 != 0

    kill_when(tmp_path, ["judge", "in.csv", "--rubric", "eth", "--samples", "3", "--concurrency", "3"],
              between_samples, server=judge_server, what="a row with some of its samples")
    partial = history(tmp_path, "SELECT judgment_id, COUNT(*) FROM judgment_sample GROUP BY judgment_id "
                                "HAVING COUNT(*) < 3")
    assert partial, "the kill was meant to land between the samples of a row"
    billed_at_kill = sum(billing.billed.values())

    judge_server.responder = billing
    code, out = judgebot(tmp_path, "resume", server=judge_server)

    assert code == 0, out
    assert history(tmp_path, "SELECT COUNT(*), MIN(samples), MAX(samples) FROM judgment WHERE status = 'scored'") == [
        (12, 3, 3)]
    assert history(tmp_path, "SELECT COUNT(*) FROM judgment_sample") == [(36,)]
    # every sample saved before the kill stood; the resume asked only for the missing ones, so at most the
    # requests in flight at the kill (one row's three samples) were billed and then asked again
    assert all(billing.billed[row[2]] >= 3 for row in rows)
    assert 36 <= sum(billing.billed.values()) <= 36 + 3, (billed_at_kill, billing.billed)


@pytest.mark.parametrize("secret", ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "slack_app_token", "DATABASE_URL"])
def test_a_judges_key_never_comes_from_judgebots_own_secrets(tmp_path, secret, monkeypatch) -> None:
    from bot.config import Settings
    from bot.errors import SetupError
    from bot.judge.panel import JudgeSpec, open_panel

    monkeypatch.setenv(secret.upper(), "xoxb-not-for-a-judge")
    jury = tmp_path / "judges.yaml"
    jury.write_text(f"- model: a\n- model: b\n  base_url: http://127.0.0.1:9/v1\n  key_env: {secret}\n")
    with pytest.raises(SetupError, match=f"judge 2: key_env {secret} names one of judgebot's own secrets"):
        read_judges(jury)
    # a run saved with such a judge, reopened: refused before any client exists
    with pytest.raises(SetupError, match=f"key_env {secret} names one of judgebot's own secrets"):
        open_panel(Settings(openai_api_key="k"), specs=[JudgeSpec(model="b", base_url="http://127.0.0.1:9/v1",
                                                                  key_env=secret)])
