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
    modules = {str(path.relative_to(ROOT)) for path in (ROOT / "bot").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    rubrics = {f"bot/builtin_rubrics/{path.name}" for path in (ROOT / "rubrics").glob("*.yaml")}
    assert rubrics and rubrics <= names, sorted(rubrics - names)
