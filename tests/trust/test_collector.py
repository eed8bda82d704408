"""The cyclic collector is held off while figures read many rows, and runs again after the last of them, as before."""

from __future__ import annotations

import gc
import threading

from bot.trust.collector import collector_held


def test_the_collector_runs_again_after_the_last_reading_and_only_if_it_ran_before() -> None:
    assert gc.isenabled()
    with collector_held():
        assert not gc.isenabled()
        with collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer reading is still under way
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_held():
            pass
        assert not gc.isenabled()  # it did not run before: it does not now
    finally:
        gc.enable()


def test_readings_in_two_threads_leave_it_running_once_both_are_done() -> None:
    inside, leave = threading.Barrier(2), threading.Event()

    def read() -> None:
        with collector_held():
            inside.wait()
            leave.wait()

    other = threading.Thread(target=read)
    other.start()
    with collector_held():
        inside.wait()
    assert not gc.isenabled()  # the other reading is under way
    leave.set()
    other.join()
    assert gc.isenabled()
