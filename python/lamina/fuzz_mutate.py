"""Byte-level mutation of valid `.mlir` files, and the rules every Lamina
tool must keep on whatever comes out (`lamina-fuzz --mutate`,
`bench/soak.py`).

A mutation flips bits, deletes, duplicates or moves a run of bytes, puts
in a token that tends to reach corners (a huge or negative number, a
bracket, a type name, a NUL or non-UTF-8 byte), or replaces a number, an
element type or an op name by another, which keeps the syntax and changes
the meaning. Each mutated file is given
to each tool in a forked child, over an existing output file, and the
run must:

* exit with 0 or 1, never by a signal, within the time limit;
* on exit 1, begin stderr with `FILE:LINE[:COL]: error: ...` or
  `TOOL: error: ...`, say `error:` on no other kind of line (a message
  may go on over several lines), and print no Python traceback and no
  internal error;
* on exit 1, leave the output file as it was (and create no other file).

    problems = check_tool_run(run, output_before)   # [] when the rules hold
"""

from __future__ import annotations

import os
import random
import re
import shutil
import tempfile
from dataclasses import dataclass, field

from lamina.fuzz_sandbox import Outcome, result_of, run_children

TOKENS = [b"0", b"-1", b"1", b"99999999999999999999", b"9223372036854775807", b"4294967296",
          b"-9223372036854775808", b"0x7FC00000", b"1.0e+39", b"nan", b"inf", b"(", b")", b"{",
          b"}", b"[", b"]", b"<", b">", b",", b":", b"x", b"?", b"%", b"@", b"^bb0", b"\"",
          b"\\", b"\x00", b"\xff\xfe", b"f16", b"bf16", b"i1", b"i64", b"f64", b"index",
          b"tensor<", b"memref<", b"vector<4x", b"dense<", b"array<i64: ", b"#map",
          b"affine_map<(d0) -> (d0)>", b"-> ", b"\n", b"// -----\n", b"loc(", b"!llvm.ptr",
          b"\"nn.", b"func.func @g() {\n", b"return", b"0x", b"e+308", b"1e-45", b"true", b"unit"]

# The tools and the options they are run with.
TOOLS = {
    "lamina-opt": ["--nn-canonicalize", "--canonicalize"],
    "lamina-compile": ["--emit=llvm"],
    "lamina-run": ["--random", "--check", "-q"],
}
OUTPUT_FLAGS = {"lamina-opt": "-o", "lamina-compile": "-o", "lamina-run": "--output"}
PREVIOUS = b"the output file as it was before the run\n"

_LOCATED = re.compile(r"^[^\n]*:\d+(:\d+)?: (error|note|warning|remark): ")
_ERROR_LINE = re.compile(r"^(\S[^:]*: )?error: |^\S+:\d+(:\d+)?: error: ")


# Mutations that keep the syntax and change the meaning: a number, an
# element type or an nn op name replaced by another of its kind, so that
# mutations reach the verifier, the pipeline and the JIT, not only the parser.
_WORDS = [
    (re.compile(rb"(?<![\w.])\d+(?![\w.])"), [b"0", b"1", b"2", b"3", b"7", b"16", b"33",
                                                 b"-1", b"4294967296", b"9223372036854775807"]),
    (re.compile(rb"\b(f32|f16|bf16|i1|f64|i64)\b"), [b"f32", b"f16", b"bf16", b"i1", b"f64",
                                                     b"i32", b"index"]),
    (re.compile(rb"\bnn\.\w+"), [b"nn." + name.encode() for name in (
        "add", "mul", "matmul", "relu", "exp", "softmax", "reduce_sum", "transpose", "reshape",
        "concat", "conv2d", "max_pool2d", "layer_norm", "attention", "select", "cast", "pad",
        "slice", "broadcast_to", "log", "div", "compare", "fused")]),
]


def _replace_word(data: bytearray, rng: random.Random) -> bool:
    pattern, choices = rng.choice(_WORDS)
    matches = list(pattern.finditer(bytes(data)))
    if not matches:
        return False
    match = rng.choice(matches)
    data[match.start():match.end()] = rng.choice(choices)
    return True


def mutate(data: bytes, rng: random.Random, rounds: int | None = None) -> bytes:
    """`data` with one to four random mutations."""
    data = bytearray(data)
    for _ in range(rounds or rng.choice([1, 1, 1, 2, 3, 4])):
        if not data:
            data += rng.choice(TOKENS)
            continue
        at = rng.randrange(len(data))
        length = rng.choice([1, 1, 2, 4, 8, 32])
        kind = rng.randrange(10)
        if kind >= 7 and _replace_word(data, rng):
            continue
        if kind == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del data[at:at + length]
        elif kind == 2:
            data[at:at] = data[at:at + length]
        elif kind == 3:
            data[at:at + rng.choice([0, 1, length])] = rng.choice(TOKENS)
        elif kind == 4:
            data[at:at] = rng.choice(TOKENS)
        elif kind == 5:
            piece = bytes(data[at:at + length])
            del data[at:at + length]
            where = rng.randrange(len(data) + 1)
            data[where:where] = piece
        else:
            data[at:at + length] = bytes(rng.randrange(256) for _ in range(min(length, 4)))
    return bytes(data)


@dataclass
class ToolRun:
    """One run of a tool on one input, and what it left behind."""

    tool: str
    input_path: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    seconds: float
    stderr: str
    output_kept: bool
    leftovers: list[str] = field(default_factory=list)


def check_tool_run(run: ToolRun) -> list[str]:
    """The rules the run broke (see the module docstring)."""
    problems = []
    if run.timed_out:
        problems.append(f"ran past the time limit ({run.seconds:.1f} s)")
    elif run.signal is not None:
        problems.append(f"died of signal {run.signal}")
    elif run.exit_code not in (0, 1):
        problems.append(f"exit code {run.exit_code}")
    if "Traceback" in run.stderr:
        problems.append("printed a Python traceback")
    if "internal error" in run.stderr:
        problems.append("reported an internal error")
    if run.exit_code == 1:
        # The first line, and every line that says `error:`, must be located
        # or the tool's own; other lines continue a message.
        lines = run.stderr.splitlines()
        for number, line in enumerate(lines):
            if number and not _ERROR_LINE.match(line):
                continue
            if not (_LOCATED.match(line) or line.startswith((f"{run.tool}: error: ", "note: "))):
                problems.append(f"unlocated stderr line: {line[:200]!r}")
                break
        if not run.stderr.strip():
            problems.append("failed without saying why")
        if not run.output_kept:
            problems.append("modified or removed the existing output file")
    if run.leftovers:
        problems.append(f"left files behind: {run.leftovers}")
    return problems


def _tool_main(tool: str):
    import importlib
    return importlib.import_module(f"lamina.tools.{tool.replace('-', '_')}").main


def _run_tool_task(tool: str, arguments: list[str]):
    def task(report):
        from lamina.diagnostics import run_tool
        return run_tool(_tool_main(tool), arguments, prog=tool)
    return task


def run_tools(inputs: list[tuple[str, bytes]], tools: dict[str, list[str]] | None = None,
              jobs: int = 1, timeout: float = 10.0, workdir: str | None = None):
    """Runs every tool on every `(name, data)` input, each run in a forked
    child over an existing output file in a directory of its own, and
    yields a ToolRun per run."""
    tools = TOOLS if tools is None else tools
    root = workdir or tempfile.mkdtemp(prefix="lamina-mutate-")

    def tasks():
        for number, (name, data) in enumerate(inputs):
            for tool, options in tools.items():
                directory = os.path.join(root, f"{number}-{tool}")
                os.makedirs(directory, exist_ok=True)
                source = os.path.join(directory, name)
                with open(source, "wb") as f:
                    f.write(data)
                output = os.path.join(directory, "out")
                with open(output, "wb") as f:
                    f.write(PREVIOUS)
                arguments = [source, *options, OUTPUT_FLAGS[tool], output]
                yield (tool, directory, source, output), _run_tool_task(tool, arguments)

    try:
        for outcome in run_children(tasks(), jobs, timeout):
            yield _tool_run(outcome)
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)


def _tool_run(outcome: Outcome) -> ToolRun:
    tool, directory, source, output = outcome.key
    exit_code = result_of(outcome) if outcome.signal is None else None
    if exit_code is None and outcome.signal is None:
        exit_code = outcome.exit_code
    try:
        with open(output, "rb") as f:
            kept = f.read() == PREVIOUS
    except OSError:
        kept = False
    leftovers = sorted(set(os.listdir(directory)) - {os.path.basename(source), "out"})
    if exit_code == 0:
        kept = True  # a valid mutation writes its output
    shutil.rmtree(directory, ignore_errors=True)
    return ToolRun(tool, source, exit_code, outcome.signal, outcome.timed_out, outcome.seconds,
                   outcome.stderr_tail, kept, leftovers)
