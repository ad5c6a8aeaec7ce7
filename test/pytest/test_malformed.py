"""lamina-opt on malformed input: every file under test/Malformed is an error
the tool must report the MLIR way.

Each file states where its error is (`// ERROR-LINE: N`) and what it says
(`// ERROR: text`). For each, `lamina-opt FILE -o OUT` must exit with 1,
print `FILE:N:COL: error: ...` as its first error, print no Python
traceback and create no OUT; an existing OUT is left as it was (checked for
one file per source of errors). Command-line
mistakes (unknown pass, bad option, missing file) must read
`lamina-opt: error: ...` under the same rules.

The runs are subprocesses started together, a few per core, so that the
whole file takes seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

MALFORMED = Path(__file__).resolve().parent.parent / "Malformed"
FILES = sorted(MALFORMED.glob("*.mlir"))
PREVIOUS = "previous contents of the output file\n"


def lamina_opt_command() -> list[str]:
    """The installed `lamina-opt` script of this Python environment."""
    script = Path(sys.executable).parent / "lamina-opt"
    if script.exists():
        return [str(script)]
    found = shutil.which("lamina-opt")
    return [found] if found else [sys.executable, "-m", "lamina.tools.lamina_opt"]


@dataclass
class Expectation:
    line: int
    message: str


def expectation(path: Path) -> Expectation:
    text = path.read_bytes().decode("utf-8", "replace")
    line = re.search(r"^// ERROR-LINE: (\d+)$", text, re.MULTILINE)
    message = re.search(r"^// ERROR: (.+)$", text, re.MULTILINE)
    assert line and message, f"{path.name} lacks its ERROR-LINE or ERROR marker"
    return Expectation(int(line.group(1)), message.group(1))


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    output: Path
    output_exists: bool
    output_text: str | None
    leftovers: list[str]


def run_lamina_opt(args: list[str], output: Path, existing: str | None = None,
                   stdin: Path | None = None) -> Run:
    """Runs lamina-opt with `-o output`; `existing` is written to `output`
    first. Records what the run left in the output's directory."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if existing is not None:
        output.write_text(existing)
    before = set(os.listdir(output.parent))
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        done = subprocess.run(lamina_opt_command() + args + ["-o", str(output)], stdin=source,
                              capture_output=True, timeout=120)
    leftovers = sorted(set(os.listdir(output.parent)) - before - {output.name})
    exists = output.exists()
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"),
               done.stderr.decode("utf-8", "replace"), output, exists,
               output.read_text() if exists else None, leftovers)


# Files whose run also goes over an existing output file: one per place an
# error can come from (lexer, parser, IRDL, upstream verifier, Lamina's
# rules in a nested region, a file cut short). Every file runs once with a
# fresh output path.
OVER_EXISTING_OUTPUT = ["not-utf8.mlir", "syntax-missing-paren.mlir",
                        "arity-too-many-operands.mlir", "return-type-mismatch.mlir",
                        "error-in-nested-region.mlir", "truncated-file.mlir"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str], Run]:
    """Every run of this file, started together: each malformed file with a
    fresh output path, some over an existing output file, the command-line
    mistakes both ways, and two files read from stdin."""
    root = tmp_path_factory.mktemp("malformed")
    adder = MALFORMED / "wrong-result-type.mlir"
    jobs = {}
    for path in FILES:
        jobs[(path.name, "fresh")] = ([str(path)], root / path.stem / "fresh" / "out.mlir",
                                      None, None)
    for name in OVER_EXISTING_OUTPUT:
        jobs[(name, "existing")] = ([str(MALFORMED / name)], root / name / "existing" / "out.mlir",
                                    PREVIOUS, None)
    for name in ("undefined-ssa-value.mlir", "wrong-result-type.mlir"):
        jobs[(name, "stdin")] = (["-"], root / "stdin" / name, None, MALFORMED / name)
    usage = {
        "unknown-pass": [str(adder), "--no-such-pass"],
        "unknown-pass-in-pipeline": [str(adder), "-p", "builtin.module(func.func(no-such-pass))"],
        "bad-upstream-option": [str(adder), "--canonicalize=no-such-option=1"],
        "bad-lamina-option": [str(adder), "--nn-canonicalize=max-iterations=many"],
        "bad-pipeline": [str(adder), "-p", "builtin.module(cse"],
        "missing-input": [str(MALFORMED / "no-such-file.mlir")],
    }
    for name, args in usage.items():
        jobs[(name, "fresh")] = (args, root / name / "fresh" / "out.mlir", None, None)
        jobs[(name, "existing")] = (args, root / name / "existing" / "out.mlir", PREVIOUS, None)
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        futures = {key: pool.submit(run_lamina_opt, *job) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def assert_clean_failure(run: Run, mode: str):
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    assert run.stdout == "", "nothing may be printed to stdout"
    assert run.leftovers == [], f"files left next to the output: {run.leftovers}"
    if mode == "existing":
        assert run.output_text == PREVIOUS, "the existing output file was modified"
    else:
        assert not run.output_exists, "an output file was created"


def test_there_are_enough_malformed_files():
    assert len(FILES) >= 30
    for path in FILES:
        expectation(path)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_malformed_file(runs, path):
    expected = expectation(path)
    run = runs[(path.name, "fresh")]
    assert_clean_failure(run, "fresh")
    located = re.compile(rf"^{re.escape(str(path))}:(\d+):(\d+): error: (.*)$", re.MULTILINE)
    errors = located.findall(run.stderr)
    assert errors, f"no '{path}:LINE:COL: error: ' line in:\n{run.stderr}"
    line, column, message = errors[0]
    assert int(line) == expected.line, run.stderr
    assert int(column) >= 1
    assert expected.message in message or expected.message in run.stderr, run.stderr
    for other in run.stderr.splitlines():
        assert other.startswith(f"{path}:"), f"unlocated line in stderr: {other!r}"


@pytest.mark.parametrize("name", OVER_EXISTING_OUTPUT)
def test_existing_output_is_kept(runs, name):
    run = runs[(name, "existing")]
    assert_clean_failure(run, "existing")
    line = expectation(MALFORMED / name).line
    assert re.search(rf"^{re.escape(str(MALFORMED / name))}:{line}:\d+: error: ", run.stderr,
                     re.MULTILINE), run.stderr


@pytest.mark.parametrize("name", ["undefined-ssa-value.mlir", "wrong-result-type.mlir"])
def test_malformed_stdin(runs, name):
    run = runs[(name, "stdin")]
    assert_clean_failure(run, "fresh")
    line = expectation(MALFORMED / name).line
    assert re.search(rf"^<stdin>:{line}:\d+: error: ", run.stderr, re.MULTILINE), run.stderr


USAGE_ERRORS = {
    "unknown-pass": "lamina-opt: error: unknown pass 'no-such-pass'",
    "unknown-pass-in-pipeline": "lamina-opt: error: unknown pass 'no-such-pass'",
    "bad-upstream-option": "lamina-opt: error: invalid options for pass 'canonicalize'",
    "bad-lamina-option": ("lamina-opt: error: option 'max-iterations' of pass "
                          "'nn-canonicalize' expects int, got 'many'"),
    "bad-pipeline": "lamina-opt: error: missing ')'",
    "missing-input": "lamina-opt: error: cannot open input file",
}


@pytest.mark.parametrize("mode", ["fresh", "existing"])
@pytest.mark.parametrize("name", list(USAGE_ERRORS))
def test_usage_error(runs, name, mode):
    run = runs[(name, mode)]
    assert_clean_failure(run, mode)
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(USAGE_ERRORS[name]), run.stderr


def test_a_good_file_does_write_the_output(tmp_path):
    """The same command succeeds on a valid file, so the checks above are
    about the errors, not about -o."""
    good = tmp_path / "good.mlir"
    good.write_text('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
                    '  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
                    '  return %0 : tensor<4xf32>\n}\n')
    run = run_lamina_opt([str(good)], tmp_path / "out" / "good.out.mlir", existing=PREVIOUS)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert '"nn.relu"' in run.output_text
    assert run.leftovers == []
