"""Running work in child processes, so that a crash is a finding and not
the end of the fuzzer.

The parent imports Lamina once and forks a child per piece of work (a fork
server: no interpreter start, no re-import, a few milliseconds each). A
child reports through a pipe as it goes (`report(message)`), so that when
it dies of a signal, or is killed for running past its time, the parent
knows what it was doing; its stderr goes to a file whose end comes back
with the outcome.

    outcomes = run_children([task_a, task_b], jobs=2, timeout=30)
    for outcome in outcomes:          # in the order the children finish
        outcome.messages, outcome.signal, outcome.timed_out, outcome.stderr_tail

The parent must not have started threads that the children need (MLIR's
thread pool starts with the first multithreaded pass run, OpenMP's with
the first parallel region): it prepares work and reads results, children
compile and run.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import selectors
import signal
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

Report = Callable[[Any], None]


@dataclass
class Outcome:
    """How a child ended: what it reported, its exit code (None when a
    signal ended it), the signal, whether it ran past its time, and the
    end of its stderr."""

    key: Any
    messages: list = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    stderr_tail: str = ""
    seconds: float = 0.0
    stdout_tail: str = ""

    @property
    def crashed(self) -> bool:
        return self.signal is not None and not self.timed_out

    def describe(self) -> str:
        if self.timed_out:
            return f"ran past its time ({self.seconds:.0f} s)"
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"died of {name}"
        return f"exited with code {self.exit_code}"


@dataclass
class _Child:
    key: Any
    pid: int
    reader: int
    stderr: Any
    stdout: Any
    start: float
    deadline: float
    buffer: bytes = b""
    messages: list = field(default_factory=list)
    closed: bool = False


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    os.write(fd, struct.pack("<Q", len(data)) + data)


def _start(key: Any, task: Callable[[Report], Any], timeout: float,
           others: Iterable[_Child]) -> _Child:
    reader, writer = os.pipe()
    stderr = tempfile.TemporaryFile()
    stdout = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            os.close(reader)
            for other in others:
                os.close(other.reader)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(stdout.fileno(), 1)
            os.dup2(stderr.fileno(), 2)
            # The parent's streams may not be its file descriptors (pytest).
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            # A fault handler the parent enabled (pytest's) writes to the
            # parent's stderr: the child's crash report belongs in its own.
            if faulthandler.is_enabled():
                faulthandler.enable(file=sys.stderr)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            result = task(lambda message: _send(writer, ("report", message)))
            _send(writer, ("result", result))
        except BaseException as error:  # noqa: BLE001 - the child reports everything
            try:
                _send(writer, ("exception", f"{type(error).__name__}: {error}"))
            except BaseException:  # noqa: BLE001
                pass
            code = 3
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001
                    pass
            os._exit(code)
    os.close(writer)
    os.set_blocking(reader, False)
    now = time.monotonic()
    return _Child(key, pid, reader, stderr, stdout, now, now + timeout)


def _drain(child: _Child) -> None:
    while True:
        try:
            data = os.read(child.reader, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            child.closed = True
            break
        child.buffer += data
    _decode(child)


def _decode(child: _Child) -> None:
    while len(child.buffer) >= 8:
        (size,) = struct.unpack("<Q", child.buffer[:8])
        if len(child.buffer) < 8 + size:
            return
        child.messages.append(pickle.loads(child.buffer[8:8 + size]))
        child.buffer = child.buffer[8 + size:]


def _finish(child: _Child, status: int, timed_out: bool) -> Outcome:
    # Whatever the child wrote before it ended.
    while not child.closed:
        try:
            data = os.read(child.reader, 1 << 16)
        except BlockingIOError:
            break
        if not data:
            break
        child.buffer += data
    _decode(child)
    os.close(child.reader)
    outcome = Outcome(child.key, child.messages, seconds=time.monotonic() - child.start,
                      timed_out=timed_out, stderr_tail=_tail(child.stderr),
                      stdout_tail=_tail(child.stdout))
    if os.WIFSIGNALED(status):
        outcome.signal = os.WTERMSIG(status)
    else:
        outcome.exit_code = os.WEXITSTATUS(status)
    return outcome


def _tail(stream, limit: int = 16000) -> str:
    """The last `limit` bytes of a child's output file, as text; closes it."""
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - limit))
    text = stream.read().decode("utf-8", "replace")
    stream.close()
    return text


def run_children(tasks: Iterable[tuple[Any, Callable[[Report], Any]]], jobs: int = 1,
                 timeout: float = 60.0) -> Iterator[Outcome]:
    """Runs each `(key, task)` in a forked child, `jobs` at a time, and
    yields their outcomes as they finish. A task is called with a
    `report(message)` function; what it returns is its last message
    (`("result", value)`), an exception its `("exception", text)`. A child
    past `timeout` seconds is killed."""
    pending = iter(tasks)
    running: dict[int, _Child] = {}
    selector = selectors.DefaultSelector()
    exhausted = False
    try:
        while True:
            while not exhausted and len(running) < max(1, jobs):
                try:
                    key, task = next(pending)
                except StopIteration:
                    exhausted = True
                    break
                child = _start(key, task, timeout, running.values())
                running[child.pid] = child
                selector.register(child.reader, selectors.EVENT_READ, child)
            if not running:
                return
            for selected, _ in selector.select(timeout=0.05):
                _drain(selected.data)
            now = time.monotonic()
            for pid, child in list(running.items()):
                timed_out = now > child.deadline
                if timed_out:
                    os.kill(pid, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                else:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done == 0:
                        continue
                selector.unregister(child.reader)
                del running[pid]
                yield _finish(child, status, timed_out)
    finally:
        for pid, child in running.items():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(child.reader)
            child.stderr.close()
            child.stdout.close()
        selector.close()


def run_child(task: Callable[[Report], Any], timeout: float = 60.0) -> Outcome:
    """Runs one task in a forked child (see `run_children`)."""
    return next(run_children([(None, task)], 1, timeout))


def load_plugins_in_time(paths: Sequence[str], timeout: float) -> None:
    """Loads the installed plugins and the files `paths` into this process
    once a forked child has loaded them within `timeout` seconds, so that a
    plugin that loops (or crashes) while loading ends a child and is named,
    instead of hanging the fuzzer. Raises UsageError."""
    from lamina.diagnostics import UsageError
    from lamina.plugins import load_plugins
    outcome = run_child(lambda report: load_plugins(paths), timeout)
    what = f"the plugins ({', '.join(paths)})" if paths else "the installed plugins"
    if outcome.timed_out:
        raise UsageError(f"{what} did not finish loading within --timeout {timeout:g} s")
    if outcome.crashed:
        raise UsageError(f"loading {what} {outcome.describe()}")
    load_plugins(paths)


def result_of(outcome: Outcome) -> Any:
    """The value the task returned, or None."""
    for kind, value in reversed(outcome.messages):
        if kind == "result":
            return value
    return None


def reports_of(outcome: Outcome) -> list:
    return [value for kind, value in outcome.messages if kind == "report"]


def exception_of(outcome: Outcome) -> str | None:
    for kind, value in outcome.messages:
        if kind == "exception":
            return value
    return None


# ---------------------------------------------------------------------------
# Tool runs in a fresh fork server (`python -m lamina.fuzz_sandbox`).


def tool_task(tool: str, arguments: list[str]) -> Callable[[Report], int]:
    """A task running a Lamina tool's `main(arguments)` as its console
    script does (run_tool: messages, exit code); returns the exit code."""
    def task(report: Report) -> int:
        import importlib

        from lamina.diagnostics import run_tool
        main = importlib.import_module(f"lamina.tools.{tool.replace('-', '_')}").main
        return run_tool(main, arguments, prog=tool)
    return task


def warm_up() -> None:
    """Imports what the tools import (and no more: no context, no thread),
    so that each forked child starts ready."""
    import importlib

    import lamina
    from lamina.pass_registry import all_passes
    from lamina.targets import get_target
    for tool in ("lamina_opt", "lamina_compile", "lamina_run"):
        importlib.import_module(f"lamina.tools.{tool}")
    all_passes()
    lamina.Pipeline.for_target(get_target("cpu"))


def serve(request: dict) -> list[dict]:
    """Runs `request["runs"]` (each `{"tool": ..., "args": [...]}`), `jobs`
    at a time with a `timeout` each; returns one result per run, in order:
    exit code (None after a signal), signal, timed out, seconds, stdout,
    stderr."""
    runs = request["runs"]
    results: list[dict] = [{} for _ in runs]
    tasks = ((index, tool_task(run["tool"], run["args"])) for index, run in enumerate(runs))
    for outcome in run_children(tasks, request.get("jobs", 1), request.get("timeout", 60.0)):
        code = result_of(outcome) if outcome.signal is None else None
        results[outcome.key] = {
            "exit_code": code if code is not None else outcome.exit_code,
            "signal": outcome.signal, "timed_out": outcome.timed_out,
            "seconds": outcome.seconds, "stdout": outcome.stdout_tail,
            "stderr": outcome.stderr_tail}
    return results


def run_tools_in_fresh_process(runs: list[dict], jobs: int = 1, timeout: float = 60.0
                               ) -> list[dict]:
    """`serve` in a new Python process (a clean parent to fork from: no
    MLIR or OpenMP threads of the caller's), for tests that run many tool
    invocations cheaply."""
    import json
    import subprocess
    done = subprocess.run([sys.executable, "-m", "lamina.fuzz_sandbox"],
                          input=json.dumps({"runs": runs, "jobs": jobs, "timeout": timeout}),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the fork server failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


if __name__ == "__main__":
    import json
    warm_up()
    json.dump(serve(json.load(sys.stdin)), sys.stdout)
