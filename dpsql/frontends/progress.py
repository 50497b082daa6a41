"""Run a query so that Ctrl-C cancels it, with a progress line on a terminal.

The query runs in a worker thread while the main thread waits, so Ctrl-C is
noticed at once and ``cancel`` cancels the query (``Connection.cancel``: free before
its engine starts, charged in full once it has); the KeyboardInterrupt then propagates
once the worker has stopped, with a note of what the query cost.

The progress line appears only when the stream is a terminal and the query has
run for ``delay`` seconds; it shows a spinner, the elapsed time and, when
``probe`` knows it, the engine's estimate of the percentage of work done. It is
erased when the query ends. Pipes, files and ``--format json`` output never see
it. The percentage and the time describe how much work the engine did, which the
wall-clock time of the command shows anyway.

>>> import io
>>> stream = io.StringIO()                       # not a terminal: nothing is written
>>> run_with_progress(lambda: 6 * 7, stream=stream, delay=0.0)
42
>>> stream.getvalue()
''
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

T = TypeVar("T")
FRAMES = "|/-\\"
CLEAR = "\r\x1b[K"
"""Carriage return, then erase to the end of the line (ANSI/VT100)."""


def run_with_progress(task: Callable[[], T], *, stream: TextIO,
                      probe: Callable[[], float] | None = None,
                      cancel: Callable[[], None] | None = None,
                      delay: float = 1.0, interval: float = 0.1) -> T:
    """``task()``, run in a worker thread; its exception, if any, is re-raised here.

    The wait uses an Event, not ``Thread.join``: in Python 3.11 a join interrupted by
    Ctrl-C can mark a thread that is still running as finished.
    """
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = task()
        except BaseException as err:  # handed to the caller's thread, re-raised below
            outcome["error"] = err
        finally:
            finished.set()

    started = time.monotonic()
    threading.Thread(target=work, name="dpsql-query", daemon=True).start()
    shown, terminal = False, is_terminal(stream)
    try:
        finished.wait(delay)
        frame = 0
        while not finished.is_set():
            if terminal:
                # Marked shown first: Ctrl-C can land right after the write, and the
                # line must still be erased.
                shown = True
                stream.write(CLEAR + progress_line(frame, time.monotonic() - started, probe))
                stream.flush()
            frame += 1
            finished.wait(interval)
    except KeyboardInterrupt as interrupted:
        if cancel is not None:
            cancel()
        finished.wait()
        _tell_what_it_cost(interrupted, outcome)
        raise
    finally:
        if shown:
            stream.write(CLEAR)
            stream.flush()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _tell_what_it_cost(interrupted: KeyboardInterrupt, outcome: dict[str, Any]) -> None:
    """Note on the KeyboardInterrupt whether the cancelled query was charged."""
    error = outcome.get("error")
    if error is not None and getattr(error, "charged", None) is not None:
        interrupted.add_note(" ".join(str(error).split()))
    elif "value" in outcome:
        interrupted.add_note("the query had finished before the cancel reached it, and was "
                             "charged; run it again to see the answer (free: it is cached)")


def progress_line(frame: int, elapsed: float, probe: Callable[[], float] | None) -> str:
    """The text shown after ``elapsed`` seconds; ``probe()`` < 0 means "unknown".

    >>> progress_line(1, 3.14, lambda: 42.4)
    '/ running 3.1 s, 42% done (Ctrl-C cancels)'
    >>> progress_line(4, 12.0, lambda: -1.0)
    '| running 12.0 s (Ctrl-C cancels)'
    """
    done = probe() if probe is not None else -1.0
    fraction = f", {done:.0f}% done" if 0 <= done <= 100 else ""
    return f"{FRAMES[frame % len(FRAMES)]} running {elapsed:.1f} s{fraction} (Ctrl-C cancels)"


def is_terminal(stream: TextIO) -> bool:
    """True for a terminal; False for pipes, files, StringIO and closed streams."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
