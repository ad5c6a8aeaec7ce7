"""Progress bars for long work (fuzzing campaigns, soak runs, benchmarks),
drawn by tqdm on stderr and only when stderr is a terminal: a log, a pipe
or a test's captured output gets no bar, and stdout, where results and
machine-readable lines go, never does.

    for outcome in progress_bar(run_children(...), total=count, description="fuzz",
                                unit="program"):
        ...
        note(f"program {index}: {verdict}")   # a line that does not tear the bar
"""

from __future__ import annotations

import sys
from typing import Iterable, TextIO

from tqdm import tqdm


def shows_progress(stream: TextIO | None = None) -> bool:
    """Whether a bar on `stream` (stderr) would be drawn: it is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(iterable: Iterable | None = None, total: int | None = None,
                 description: str = "", unit: str = "it",
                 stream: TextIO | None = None) -> tqdm:
    """A tqdm bar on `stream` (stderr), disabled unless it is a terminal;
    it leaves no line behind when done. Iterate it, or call `update(n)`."""
    stream = sys.stderr if stream is None else stream
    return tqdm(iterable, total=total, desc=description or None, unit=unit, file=stream,
                disable=not shows_progress(stream), leave=False, dynamic_ncols=True)


def note(text: str, stream: TextIO | None = None) -> None:
    """Prints a line (to stdout by default) above any bar on the terminal."""
    tqdm.write(text, file=sys.stdout if stream is None else stream)
    (sys.stdout if stream is None else stream).flush()
