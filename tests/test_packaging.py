"""The installable package: a wheel built from the checkout holds every module and the shipped rubrics."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_holds_every_module_and_rubric(tmp_path):
    # From a clean copy: a build/ folder left by an earlier build would hide a package missing from pyproject.
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv*", "build", "*.egg-info",
                                                                 "__pycache__", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("judgebot-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    # The modules, and the stubs some of them read at import (the store's door lists its names in one).
    modules = {str(path.relative_to(ROOT)) for pattern in ("*.py", "*.pyi") for path in (ROOT / "bot").rglob(pattern)}
    assert modules <= names, sorted(modules - names)
    rubrics = {f"bot/builtin_rubrics/{path.name}" for path in (ROOT / "rubrics").glob("*.yaml")}
    assert rubrics and rubrics <= names, sorted(rubrics - names)


def test_the_images_health_check_asks_a_serving_bot_and_fails_without_one(bot_settings, slack_server, judge_server,
                                                                            tmp_path):
    """The Dockerfile's HEALTHCHECK, run as the image runs it, against a real `judgebot serve` in HTTP mode."""
    import asyncio
    import json
    import os
    import re
    import signal

    from tests.support import forkserver
    from tests.support.serve_process import free_port, serve_env, wait_healthy

    found = re.search(r"^HEALTHCHECK .* CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "the Dockerfile has a HEALTHCHECK in exec form"
    check = json.loads(found.group(1))
    assert check[:2] == ["python", "-c"]

    def healthy(port: int, **extra: str) -> bool:
        env = {k: v for k, v in os.environ.items() if k not in ("SLACK_APP_TOKEN", "PORT")}
        return subprocess.run([sys.executable, "-c", check[2]], env={**env, "PORT": str(port), **extra},
                              capture_output=True, timeout=30).returncode == 0

    port = free_port()
    assert not healthy(port)  # nothing listens yet
    assert healthy(port, SLACK_APP_TOKEN="xapp-1")  # Socket Mode has no port to ask
    process = forkserver.start(["serve"], cwd=tmp_path, env=serve_env(bot_settings, PORT=str(port)),
                               out=tmp_path / "out", err=tmp_path / "err")
    try:
        asyncio.run(wait_healthy(f"http://127.0.0.1:{port}"))
        assert healthy(port)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
