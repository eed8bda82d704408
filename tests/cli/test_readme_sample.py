"""The README's "What you get" is what a first run prints (written by tests.support.readme_sample from a real run
against the local judge server), and a command says where the history is kept once: on the run that creates it."""

from __future__ import annotations

import shutil

from tests.support.cli import EXAMPLE, judgebot
from tests.support.readme_sample import README, comparable, in_readme, sample


def test_the_readme_sample_is_what_a_first_run_prints() -> None:
    assert comparable(in_readme(README.read_text(encoding="utf-8"))) == comparable(sample()), (
        "README.md's sample is stale: write it again with `python -m tests.support.readme_sample`")


def test_where_the_history_is_kept_is_said_once_on_the_run_that_creates_it(tmp_path, judge_server, db_url) -> None:
    from tests.support.cli import eth_responder

    judge_server.responder = eth_responder
    shutil.copy(EXAMPLE, tmp_path / "answers.csv")
    if db_url.startswith("sqlite"):  # the default place, in the home folder
        where, env = "~/.local/share/judgebot/judgebot.db", {"HOME": str(tmp_path), "JUDGEBOT_DB": None,
                                                            "XDG_DATA_HOME": None}
    else:  # a database's URL, without its password
        url = db_url.replace("://postgres@", "://postgres:s3cret@")
        where, env = url.replace(":s3cret@", ":***@"), {"DATABASE_URL": url}

    code, first = judgebot(tmp_path, "judge", "answers.csv", "--rubric", "eth", server=judge_server, **env)
    assert code == 0, first
    assert f"History: {where} (new)\n" in first and first.count("History:") == 1, first
    assert "s3cret" not in first
    for command in (["judge", "answers.csv", "--rubric", "eth", "--fresh"], ["runs"]):
        code, later = judgebot(tmp_path, *command, server=judge_server, **env)
        assert code == 0 and "History:" not in later, later
