"""lamina-opt on malformed input: every file under test/Malformed is an error
the tool must report the MLIR way.

Each file states where its error is (`// ERROR-LINE: N`) and what it says
(`// ERROR: text`). For each, `lamina-opt FILE -o OUT` must exit with 1,
print `FILE:N:COL: error: ...` as its first error, print no Python
traceback and create no OUT; an existing OUT is left as it was (checked for
one file per source of errors). A file may name another tool and its
options (`// TOOL: lamina-run --random`, the output then given as
`--output OUT`), and a file whose fault is in what the options make of it
says `// ERROR-LINE: none`: its error reads `TOOL: error: ...`. Command-line
mistakes (unknown pass, bad option, missing file) must read
`lamina-opt: error: ...` under the same rules.

The malformed files run in one fork server (`lamina.fuzz_sandbox`: a fresh
Python process that imports Lamina once and forks a child per run, which
runs the tool's `main` as its console script does), so that a hundred
files take seconds; the runs over an existing output, from stdin and with
command-line mistakes are subprocesses of the installed scripts, started
together, a few per core.
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

import ml_dtypes
import numpy as np
import pytest

from lamina.diagnostics import CompileError
from lamina.fuzz_sandbox import run_tools_in_fresh_process

pytestmark = pytest.mark.xdist_group("malformed")

MALFORMED = Path(__file__).resolve().parent.parent / "Malformed"
FILES = sorted(MALFORMED.glob("*.mlir"))
PREVIOUS = "previous contents of the output file\n"


def tool_command(tool: str = "lamina-opt") -> list[str]:
    """The installed script of a Lamina tool in this Python environment."""
    script = Path(sys.executable).parent / tool
    if script.exists():
        return [str(script)]
    found = shutil.which(tool)
    module = tool.replace("-", "_")
    return [found] if found else [sys.executable, "-m", f"lamina.tools.{module}"]


def lamina_opt_command() -> list[str]:
    return tool_command("lamina-opt")


@dataclass
class Expectation:
    line: int | None  # None: an error of the tool, `TOOL: error: ...`
    message: str
    tool: str = "lamina-opt"
    options: tuple[str, ...] = ()


def expectation(path: Path) -> Expectation:
    text = path.read_bytes().decode("utf-8", "replace")
    line = re.search(r"^// ERROR-LINE: (\d+|none)$", text, re.MULTILINE)
    message = re.search(r"^// ERROR: (.+)$", text, re.MULTILINE)
    assert line and message, f"{path.name} lacks its ERROR-LINE or ERROR marker"
    tool = re.search(r"^// TOOL: (lamina-opt|lamina-compile|lamina-run)(.*)$", text, re.MULTILINE)
    return Expectation(None if line.group(1) == "none" else int(line.group(1)), message.group(1),
                       tool.group(1) if tool else "lamina-opt",
                       tuple(tool.group(2).split()) if tool else ())


def output_flag(tool: str) -> str:
    return "--output" if tool == "lamina-run" else "-o"


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
                   stdin: Path | None = None, tool: str = "lamina-opt") -> Run:
    """Runs a tool (lamina-opt by default) with its output going to
    `output`; `existing` is written to `output` first. Records what the run
    left in the output's directory."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if existing is not None:
        output.write_text(existing)
    before = set(os.listdir(output.parent))
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        done = subprocess.run(tool_command(tool) + args + [output_flag(tool), str(output)],
                              stdin=source, capture_output=True, timeout=120)
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
    forked = {}
    for path in FILES:
        expected = expectation(path)
        output = root / path.stem / "fresh" / "out.mlir"
        output.parent.mkdir(parents=True)
        forked[(path.name, "fresh")] = (expected.tool, [*expected.options, str(path),
                                                        output_flag(expected.tool), str(output)],
                                        output)
    for name in OVER_EXISTING_OUTPUT:
        expected = expectation(MALFORMED / name)
        jobs[(name, "existing")] = ([*expected.options, str(MALFORMED / name)],
                                    root / name / "existing" / "out.mlir", PREVIOUS, None,
                                    expected.tool)
    for name in ("undefined-ssa-value.mlir", "wrong-result-type.mlir"):
        jobs[(name, "stdin")] = (["-"], root / "stdin" / name, None, MALFORMED / name)
    usage = {
        "unknown-pass": [str(adder), "--no-such-pass"],
        "unknown-pass-in-pipeline": [str(adder), "-p", "builtin.module(func.func(no-such-pass))"],
        "bad-upstream-option": [str(adder), "--canonicalize=no-such-option=1"],
        "bad-lamina-option": [str(adder), "--nn-canonicalize=max-iterations=many"],
        "bad-pipeline": [str(adder), "-p", "builtin.module(cse"],
        "missing-input": [str(MALFORMED / "no-such-file.mlir")],
        "upstream-option-overflow": [str(adder),
                                     "--canonicalize=max-iterations=99999999999999999999"],
    }
    for name, args in usage.items():
        jobs[(name, "fresh")] = (args, root / name / "fresh" / "out.mlir", None, None)
        jobs[(name, "existing")] = (args, root / name / "existing" / "out.mlir", PREVIOUS, None)
    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        futures = {key: pool.submit(run_lamina_opt, *job) for key, job in jobs.items()}
        results = run_tools_in_fresh_process(
            [{"tool": tool, "args": args} for tool, args, _ in forked.values()],
            jobs=os.cpu_count() or 1, timeout=120)
        runs = {key: future.result() for key, future in futures.items()}
    for (key, (tool, args, output)), result in zip(forked.items(), results):
        exists = output.exists()
        runs[key] = Run(result["exit_code"] if result["signal"] is None else -result["signal"],
                        result["stdout"], result["stderr"], output, exists,
                        output.read_text() if exists else None,
                        sorted(set(os.listdir(output.parent)) - {output.name}))
    return runs


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
    assert len(FILES) >= 100
    for path in FILES:
        expectation(path)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_malformed_file(runs, path):
    expected = expectation(path)
    run = runs[(path.name, "fresh")]
    assert_clean_failure(run, "fresh")
    if expected.line is None:
        lines = run.stderr.splitlines()
        assert len(lines) == 1, f"one line expected (upstream's own lines held back):\n{run.stderr}"
        assert lines[0].startswith(f"{expected.tool}: error: "), run.stderr
        assert expected.message in lines[0], run.stderr
        return
    located = re.compile(rf"^{re.escape(str(path))}:(\d+):(\d+): error: (.*)$", re.MULTILINE)
    errors = located.findall(run.stderr)
    assert errors, f"no '{path}:LINE:COL: error: ' line in:\n{run.stderr}"
    line, column, message = errors[0]
    assert int(line) == expected.line, run.stderr
    assert int(column) >= 1
    assert expected.message in message or expected.message in run.stderr, run.stderr
    for other in run.stderr.splitlines():
        # (A note without a place says which pass or stage the error came from.)
        assert not other.strip() or other.startswith((f"{path}:", "note: ")), \
            f"unlocated line in stderr: {other!r}"


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
    "upstream-option-overflow": ("lamina-opt: error: invalid options for pass 'canonicalize': for "
                                 "the --max-iterations option: '99999999999999999999' value "
                                 "invalid for long argument"),
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


# ---------------------------------------------------------------------------
# What the command line and the input files of each tool can get wrong.

RELU = ('func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
        '  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
        '  return %0 : tensor<4xf32>\n}\n')


@pytest.fixture(scope="module")
def relu_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("relu") / "relu.mlir"
    path.write_text(RELU)
    return path


def inputs_file(directory: Path, kind: str) -> Path:
    """An inputs file for @main of RELU: whole, cut short, or not a zip."""
    path = directory / f"{kind}.npz"
    with open(path, "wb") as f:
        np.savez(f, arg0=np.ones(4, np.float32))
    data = path.read_bytes()
    path.write_bytes({"whole": data, "truncated": data[:len(data) // 2],
                      "garbage": b"not an archive"}[kind])
    return path


@pytest.mark.parametrize("tool", ["lamina-opt", "lamina-compile", "lamina-run"])
@pytest.mark.parametrize("where", ["directory", "missing-directory"])
def test_output_that_cannot_be_written(tmp_path, relu_file, tool, where):
    output = tmp_path if where == "directory" else tmp_path / "no-such-dir" / "out"
    extra = ["--random"] if tool == "lamina-run" else []
    done = subprocess.run(tool_command(tool) + [str(relu_file), *extra, output_flag(tool),
                                                str(output)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"{tool}: error: cannot write output file '{output}': "), \
        done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stdout == ""
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind,message", [
    ("truncated", "cannot read inputs from"), ("garbage", "cannot read inputs from")])
def test_damaged_inputs(tmp_path, relu_file, kind, message):
    inputs = inputs_file(tmp_path, kind)
    done = subprocess.run(tool_command("lamina-run") + [str(relu_file), "--inputs", str(inputs),
                                                        "--output", str(tmp_path / "out.npz")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"lamina-run: error: {message} '{inputs}'"), done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.npz").exists()


# ---------------------------------------------------------------------------
# Inputs at the edges that are valid and must work.

def test_rank_zero_arguments_run(tmp_path):
    program = tmp_path / "scalar.mlir"
    program.write_text('func.func @main(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {\n'
                       '  %0 = "nn.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
                       '  return %0 : tensor<f32>\n}\n')
    inputs = tmp_path / "in.npz"
    np.savez(inputs, arg0=np.array(1.5, np.float32), arg1=np.array(2.25, np.float32))
    done = subprocess.run(tool_command("lamina-run") + [str(program), "--inputs", str(inputs),
                                                        "--check", "--output",
                                                        str(tmp_path / "out.npz")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "all results match the reference" in done.stdout
    with np.load(tmp_path / "out.npz") as results:
        assert results["res0"].shape == () and results["res0"] == 3.75


def test_bf16_arrays_saved_by_numpy_are_inputs(tmp_path):
    program = tmp_path / "bf16.mlir"
    program.write_text('func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {\n'
                       '  %0 = "nn.neg"(%x) : (tensor<3xbf16>) -> tensor<3xbf16>\n'
                       '  return %0 : tensor<3xbf16>\n}\n')
    np.save(tmp_path / "x.npy", np.array([1, 2, 3]).astype(ml_dtypes.bfloat16))
    done = subprocess.run(tool_command("lamina-run") + [str(program), "--inputs",
                                                        str(tmp_path / "x.npy"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "[-1 -2 -3]" in done.stdout


def test_nesting_up_to_the_limit_parses_and_runs_passes():
    from lamina.parsing import MAX_NESTING_DEPTH, check_nesting
    depth = MAX_NESTING_DEPTH - 2  # the function's braces and one region each
    text = ("func.func @f() -> i32 {\n"
            + "".join(f"%r{i} = scf.execute_region -> i32 {{\n" for i in range(depth))
            + "%c = arith.constant 1 : i32\nscf.yield %c : i32\n"
            + "".join(f"}}\nscf.yield %r{i} : i32\n" for i in range(depth - 1, 0, -1))
            + "}\nreturn %r0 : i32\n}\n")
    done = subprocess.run(lamina_opt_command() + ["-", "--canonicalize", "--cse"], input=text,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "arith.constant 1 : i32" in done.stdout
    check_nesting("[" * MAX_NESTING_DEPTH, "deep")
    with pytest.raises(CompileError, match="nest more than") as raised:
        check_nesting("// [[[[\n" + '"[[[[" ' + "[" * (MAX_NESTING_DEPTH + 1), "deep")
    assert raised.value.diagnostics[0].col == 8 + MAX_NESTING_DEPTH


def test_one_ulp_of_the_output_type_passes():
    """A result computed in f16 is held to f16, even against a float64
    reference: one f16 ulp (after an f32 -> f16 cast) is no mismatch."""
    from lamina.reference import compare
    exact = np.linspace(-3, 3, 101)
    rounded = exact.astype(np.float16)
    one_ulp = np.nextafter(rounded, np.float16(np.inf))
    assert compare(one_ulp, exact).ok
    assert compare(one_ulp, exact).rtol == compare(rounded, rounded).rtol
    assert not compare(one_ulp.astype(np.float32), exact).ok  # held to f32: a mismatch


def test_isolated_passes_print_what_in_process_passes_print(relu_file):
    """--isolate-passes changes where upstream passes run, not their result."""
    args = [str(relu_file), "--nn-canonicalize", "--convert-nn-to-linalg", "--canonicalize",
            "-p", "builtin.module(func.func(cse))"]
    in_process = subprocess.run(lamina_opt_command() + args, capture_output=True, text=True,
                                timeout=120)
    isolated = subprocess.run(lamina_opt_command() + args + ["--isolate-passes"],
                              capture_output=True, text=True, timeout=120)
    assert in_process.returncode == isolated.returncode == 0, isolated.stderr
    assert isolated.stdout == in_process.stdout and "linalg.generic" in isolated.stdout


def test_reference_over_zero_sized_axes():
    """The reference interpreter (lamina-run --check) gives the empty result
    of a softmax over a zero-sized axis, and reports a maximum over nothing
    at the op instead of failing inside NumPy."""
    from lamina.parsing import parse_source
    from lamina.reference import evaluate
    module = parse_source(
        'func.func @main(%x: tensor<3x0xf32>) -> (tensor<3x0xf32>, tensor<3xf32>) {\n'
        '  %0 = "nn.softmax"(%x) {axis = 1 : i64} : (tensor<3x0xf32>) -> tensor<3x0xf32>\n'
        '  %1 = "nn.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>\n'
        '  return %0, %1 : tensor<3x0xf32>, tensor<3xf32>\n}\n', "zero.mlir")
    softmax, mean = evaluate(module, [np.zeros((3, 0), np.float32)])
    assert softmax.shape == (3, 0) and np.isnan(mean).all()
    module = parse_source(
        'func.func @main(%x: tensor<3x0xf32>) -> tensor<3xf32> {\n'
        '  %0 = "nn.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>\n'
        '  return %0 : tensor<3xf32>\n}\n', "zero.mlir")
    with pytest.raises(CompileError, match=r"zero.mlir:2:8: error: 'nn.reduce_max' op has no "
                                           "reference value"):
        evaluate(module, [np.zeros((3, 0), np.float32)])
