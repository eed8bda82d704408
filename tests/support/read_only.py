"""Make a file read-only for a test, for root too (whom permission bits do not stop): chmod, and chattr +i as root."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` cannot be written while inside; skips the test where that cannot be arranged."""
    mode = path.stat().st_mode
    path.chmod(0o444)
    immutable = os.geteuid() == 0
    if immutable and (shutil.which("chattr") is None
                      or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0):
        path.chmod(mode)
        pytest.skip("running as root on a file system without chattr +i: a file cannot be made read-only")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)
