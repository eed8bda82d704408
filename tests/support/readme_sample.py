"""The README's "What you get" sample, written from a real run: `judgebot judge examples/answers.csv --rubric eth` as a
new user's first run (a new history, the default judge) against the local judge server the tests use.

`python -m tests.support.readme_sample` writes it into README.md; tests/cli/test_readme_sample.py fails when it is stale.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from tests.support import forkserver
from tests.support.cli import EXAMPLE, ROOT, base_env, eth_responder
from tests.support.openai_server import FakeJudgeServer

README = ROOT / "README.md"
MARK = "<!-- written by `python -m tests.support.readme_sample`; a test fails when it is stale -->"
COMMAND = ["judge", "examples/answers.csv", "--rubric", "eth"]
WIDTH = "120"  # the terminal's columns, whatever the terminal that writes it
RATE = re.compile(r"\d+(\.\d+)? rows/s")  # the one figure that differs from run to run


def sample() -> str:
    """What the command prints on a first run, as a terminal shows it: the history's line (stderr) comes when the
    history is opened, before the rest."""
    server = FakeJudgeServer(eth_responder).start()
    try:
        with tempfile.TemporaryDirectory(prefix="judgebot-readme-") as folder:
            home = Path(folder)
            (home / "examples").mkdir()
            shutil.copy(EXAMPLE, home / "examples" / "answers.csv")
            env = base_env(home, server, HOME=str(home), JUDGEBOT_DB=None, XDG_DATA_HOME=None, JUDGE_MODEL=None,
                           COLUMNS=WIDTH)
            code, out, err = forkserver.run(COMMAND, cwd=home, env=env)
    finally:
        server.stop()
    assert code == 0, out + err
    lines = [f"$ judgebot {' '.join(COMMAND)}", *err.splitlines(), *out.splitlines()]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def in_readme(text: str) -> str:
    """The sample as README.md holds it (the fenced block after MARK)."""
    start = text.index("```\n", text.index(MARK)) + 4
    return text[start:text.index("```\n", start)]


def written(text: str, block: str) -> str:
    """README.md's text with `block` as its sample."""
    start = text.index("```\n", text.index(MARK)) + 4
    return text[:start] + block + text[text.index("```\n", start):]


def comparable(block: str) -> str:
    """A sample without what differs from run to run (the rate of rows a second)."""
    return RATE.sub("N rows/s", block)


if __name__ == "__main__":
    README.write_text(written(README.read_text(encoding="utf-8"), sample()), encoding="utf-8")
    sys.exit(0)
