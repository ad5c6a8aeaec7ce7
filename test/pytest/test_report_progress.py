"""Progress bars (lamina.progress) are drawn on a terminal and nowhere else:
lamina-fuzz with stderr on a pseudo-terminal shows one and clears it, and
with stderr on a pipe prints no bar at all, on either stream."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios

from lamina.progress import note, progress_bar, shows_progress

TOOLS = os.path.dirname(sys.executable)
FUZZ = [os.path.join(TOOLS, "lamina-fuzz"), "--seed", "1", "--count", "2", "--configs", "cpu"]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bar_only_on_a_terminal():
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        for _ in progress_bar(range(3), total=3, description="work", stream=stream):
            pass
    assert shows_progress(terminal) and not shows_progress(pipe)
    drawn = terminal.getvalue()
    assert drawn.startswith("\rwork:   0%|") and "0/3" in drawn
    assert drawn.endswith("\r") and "\n" not in drawn  # cleared when done
    assert pipe.getvalue() == ""


def test_note_is_a_plain_line_without_a_terminal():
    pipe = io.StringIO()
    with progress_bar(total=2, stream=pipe) as bar:
        note("program 1: ok", pipe)
        bar.update(2)
    assert pipe.getvalue() == "program 1: ok\n"


def test_fuzz_campaign_bar_on_a_terminal_and_not_in_a_pipe():
    piped = subprocess.run(FUZZ, capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""
    assert piped.stdout.startswith("lamina-fuzz: 2 programs in ")
    assert "\r" not in piped.stdout and "%|" not in piped.stdout

    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        done = subprocess.run(FUZZ, stdout=subprocess.PIPE, stderr=secondary, text=True,
                              timeout=600)
        os.close(secondary)
        drawn = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(primary)
    assert done.returncode == 0
    text = drawn.decode(errors="replace")
    # Drawn at least once with its total (tqdm redraws at most every 0.1 s,
    # so two quick programs may end before it shows 1/2 or 2/2).
    assert "fuzz:" in text and "/2 [" in text and "program" in text
    # The bar leaves no line behind, and stdout has the same summary as before.
    assert text.endswith("\r") and "\n" not in text.rstrip("\r")
    assert done.stdout.startswith("lamina-fuzz: 2 programs in ") and "\r" not in done.stdout
