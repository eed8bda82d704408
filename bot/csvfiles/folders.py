"""The temporary folders the bot reads a shared file and writes its results in, and those a killed process left."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

PREFIX = "judgebot-"


def work_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder of one's own, deleted with what it holds on leaving it (`with work_folder() as path:`)."""
    return tempfile.TemporaryDirectory(prefix=PREFIX)


def remove_left_over(before: datetime, root: Path | None = None) -> int:
    """Delete the work folders last changed before `before` (UTC) in the temporary directory (`root`, else the
    system's): a folder is deleted on leaving it, so only a process killed while it held one leaves it behind, with a
    shared file or results in it. Folders that cannot be deleted (another user's) are passed by. How many went."""
    cutoff = before.replace(tzinfo=UTC).timestamp() if before.tzinfo is None else before.timestamp()
    gone = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            if not folder.is_dir() or folder.is_symlink() or folder.stat().st_mtime >= cutoff:
                continue
            shutil.rmtree(folder)
        except OSError:
            continue
        gone += 1
    return gone
