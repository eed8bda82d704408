"""Python's cyclic garbage collector held off while a figure reads tens of thousands of rows, which make no cycles:
the collections their number set off went over every object of the process, as long as the rest of the reading."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_held = [0]  # readings under way with the collector held off
_was_enabled = [False]  # whether it ran before the first of them


@contextmanager
def collector_held() -> Iterator[None]:
    """The collector held off until the last reading under way is done, then running again if it ran before."""
    with _lock:
        if not _held[0]:
            _was_enabled[0] = gc.isenabled()
            gc.disable()
        _held[0] += 1
    try:
        yield
    finally:
        with _lock:
            _held[0] -= 1
            if not _held[0] and _was_enabled[0]:
                gc.enable()
