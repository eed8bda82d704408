"""The judges' shutdown dates: the table shipped, how a model is found in it, a settings file's additions, and when a
judge is warned of."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from bot.errors import SetupError
from bot.judge.lifetime import JudgeWatch
from bot.llm.listed_shutdowns import shutdown_dates
from bot.llm.shutdowns import (
    WARN_DAYS,
    builtin_shutdowns,
    load_shutdowns,
    settings_shutdowns,
    shutdown_of,
    shutting_down,
)

TODAY = date(2026, 11, 27)


def test_the_table_holds_the_announced_dates_with_their_source_and_the_day_they_were_read() -> None:
    table = builtin_shutdowns()
    for model in ("gpt-5", "gpt-5-mini", "gpt-5-nano", "o3"):
        assert table[model].shutdown == date(2026, 12, 11)
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini"):
        assert table[model].shutdown == date(2027, 1, 14) and table[model].announced == date(2026, 10, 14)
    assert all("deprecations" in entry.source and entry.read == date(2026, 12, 7) for entry in table.values())
    assert {model: entry.replacement for model, entry in table.items() if entry.replacement} == {
        "gpt-4o-mini": "gpt-6-luna", "gpt-5-mini": "gpt-6.1-terra"}


@pytest.mark.parametrize(("model", "listed"), [
    ("gpt-4o-mini", "gpt-4o-mini"), ("GPT-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("openai/gpt-4.1", "gpt-4.1"), ("gpt-5-2025-08-07", "gpt-5"), ("gpt-5-mini", "gpt-5-mini"),
])
def test_a_model_is_found_by_name_snapshot_or_router_prefix(model: str, listed: str) -> None:
    table = builtin_shutdowns()
    assert shutdown_of(model, table) == table[listed]


@pytest.mark.parametrize("model", ["gpt-4.1-nano", "gpt-5.4-mini", "gpt-5.1", "llama-3.1-70b", "judge-test"])
def test_a_model_with_no_announced_date_is_never_warned_of(model: str) -> None:
    assert shutdown_of(model, builtin_shutdowns()) is None
    assert shutting_down([model], TODAY, builtin_shutdowns()) == []


def test_a_judge_is_warned_of_within_sixty_days_and_after_its_date_not_before() -> None:
    table = builtin_shutdowns()
    near = shutting_down(["gpt-4o-mini", "gpt-5", "gpt-4.1-nano"], TODAY, table)
    assert [(found.judge, found.days_left) for found in near] == [("gpt-5", 14), ("gpt-4o-mini", 48)]  # soonest first
    assert near[0].text() == ("The judge gpt-5 shuts down on 2026-12-11, in 14 days (OpenAI's deprecations page "
                              "(developers.openai.com/api/docs/deprecations), read 2026-12-07)")
    assert near[1].text().startswith("The judge gpt-4o-mini shuts down on 2027-01-14, in 48 days; its named "
                                     "replacement is gpt-6-luna (OpenAI's deprecations page")
    # far: 2027-01-14 is 61 days after 2026-11-14, one day beyond the warning
    assert shutting_down(["gpt-4o-mini"], date(2026, 11, 14), table) == []
    assert [found.days_left for found in shutting_down(["gpt-4o-mini"], date(2026, 11, 15), table)] == [WARN_DAYS]
    [gone] = shutting_down(["gpt-5"], date(2026, 12, 20), table)
    assert gone.text().startswith("The judge gpt-5 was shut down on 2026-12-11, 9 days ago")
    [today] = shutting_down(["gpt-5"], date(2026, 12, 11), table)
    assert "shuts down today, 2026-12-11" in today.text()


def test_a_settings_file_adds_and_overrides_dates(tmp_path) -> None:
    extra = tmp_path / "shutdowns.yaml"
    extra.write_text("models:\n"
                     "  our-llama: {shutdown: 2026-12-01, source: our platform team's notice, read: 2026-11-20}\n"
                     "  gpt-4o-mini: {shutdown: 2027-06-30, source: our Azure deployment, read: 2026-11-20}\n")
    table = load_shutdowns(extra)
    assert [found.judge for found in shutting_down(["our-llama", "gpt-4o-mini"], TODAY, table)] == ["our-llama"]
    assert table["gpt-5"] == builtin_shutdowns()["gpt-5"]


@pytest.mark.parametrize(("text", "words"), [
    ("models: [", "not valid YAML"),
    ("models:\n  x: {shutdown: soon, source: s, read: 2026-11-20}\n", "models.x.shutdown"),
    ("models:\n  x: {shutdown: 2026-12-01}\n", "shutdown, source and read"),
])
def test_a_settings_file_that_cannot_be_read_is_named(tmp_path, text: str, words: str) -> None:
    extra = tmp_path / "bad.yaml"
    extra.write_text(text)
    with pytest.raises(SetupError, match="JUDGE_SHUTDOWNS") as raised:
        load_shutdowns(extra)
    assert words in str(raised.value)


@pytest.mark.parametrize(("listed", "found"), [
    ({"object": "list", "data": [{"id": "gpt-4o-mini", "shutdown_date": "2027-01-14"},
                                 {"id": "GPT-6-Luna", "shutdown_date": None}, {"id": "broken", "shutdown_date": "soon"}]},
     {"gpt-4o-mini": date(2027, 1, 14)}),
    ({"object": "list", "data": [{"id": "gpt-6-luna", "shutdown_date": None}]}, {}),  # told, and none dated
    ({"object": "list", "data": [{"id": "llama", "max_model_len": 8192}]}, None),  # vLLM: no such field
    ({"error": {"message": "no"}}, None), ("<html>", None), (None, None),
])
def test_a_model_lists_dates_are_read_where_it_gives_the_field(listed: object, found: object) -> None:
    assert shutdown_dates(listed) == found


def test_a_model_lists_date_wins_and_keeps_the_replacement_the_table_names() -> None:
    watch = JudgeWatch(("gpt-4o-mini", "gpt-4.1-nano"))
    watch.learn("https://api.openai.com/v1", {"gpt-4o-mini": date(2026, 12, 20), "gpt-4.1-nano": date(2027, 1, 20)},
                datetime(2026, 11, 27, 8, 0))
    near = watch.near(today=TODAY)
    assert [(found.judge, found.when.shutdown) for found in near] == [("gpt-4o-mini", date(2026, 12, 20)),
                                                                     ("gpt-4.1-nano", date(2027, 1, 20))]
    assert near[0].text() == ("The judge gpt-4o-mini shuts down on 2026-12-20, in 23 days; its named replacement is "
                              "gpt-6-luna (the judge endpoint's model list (https://api.openai.com/v1/models), read "
                              "2026-11-27)")
    watch.learn("https://api.openai.com/v1", {}, datetime(2026, 11, 28, 8, 0))  # read again: no dates any more
    assert [found.when.shutdown for found in watch.near(today=TODAY)] == [date(2027, 1, 14)]  # the table's again


def test_a_settings_file_wins_over_a_model_list(tmp_path) -> None:
    extra = tmp_path / "shutdowns.yaml"
    extra.write_text("models:\n  gpt-4o-mini: {shutdown: 2027-06-30, source: our Azure deployment, read: 2026-11-20}\n")
    watch = JudgeWatch(("gpt-4o-mini",), load_shutdowns(extra), settings_shutdowns(extra))
    watch.learn("https://api.openai.com/v1", {"gpt-4o-mini": date(2026, 12, 20)}, datetime(2026, 11, 27, 8, 0))
    assert watch.near(today=TODAY) == []
