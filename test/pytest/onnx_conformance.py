"""The ONNX backend node tests through `lamina.from_onnx` and `lamina.compile`.

    python test/pytest/onnx_conformance.py            # the CI sample: a summary
    python test/pytest/onnx_conformance.py --all      # every case (long)
    python test/pytest/onnx_conformance.py --all --json run.json --write-expected
                                                      # rewrites onnx_expected_failures.txt
    python test/pytest/onnx_conformance.py --outcomes run.json
                                                      # a run's summary again

The cases are the `onnx` package's (`onnx.backend.test.case.node`,
generated in memory). Each runs in a forked child (lamina.fuzz_sandbox),
so that an abort is a finding and not the end of the run: the model is
imported with its weights as constants, compiled for the CPU, called on
each of the case's input sets and compared with the expected outputs
(floats at the case's rtol and atol, 16-bit floats at no less than two
units in the last place; integers and booleans exactly; the element type
and the shape exactly).

Each case ends in one outcome:

* `pass`;
* an expected failure, a clear Lamina error saying what is not supported,
  in one of the categories of `CATEGORIES` (`op`: an op type Lamina does not
  map; `attribute`; `dtype`: an element type nn has no tensors of;
  `runtime-value`: an input that must be known when the model is imported;
  `shape`: a dynamic shape or a rank Lamina does not take; `input`: a graph
  input that is no tensor; `unsupported`: another "not supported");
* a failure: `wrong` (a result that differs), `crash` (the child died of a
  signal), `timeout`, `internal` (an internal error or a Python exception),
  `compile` (the importer accepted the model and the compiler failed on it).

The checked-in list `onnx_expected_failures.txt` holds one line per
expected failure, `NAME CATEGORY`; the test fails on any case whose outcome
differs from the list (a listed case that now passes too, so that the list
only shrinks).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

EXPECTED_FAILURES = Path(__file__).with_name("onnx_expected_failures.txt")

# Categories of a clear "not supported": what may be on the expected list.
CATEGORIES = ("op", "attribute", "dtype", "runtime-value", "shape", "input", "unsupported")
FAILURES = ("wrong", "crash", "timeout", "internal", "compile")

# The CI sample: the cases whose name hashes to 0 modulo this (deterministic,
# and stable as the onnx package adds cases).
SAMPLE_MODULUS = 12

TIMEOUT_SECONDS = 120.0


def in_sample(name: str) -> bool:
    return zlib.crc32(name.encode()) % SAMPLE_MODULUS == 0


def read_expected(path: Path = EXPECTED_FAILURES) -> dict[str, str]:
    expected = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, category = line.split()
            expected[name] = category
    return expected


def classify(message: str) -> str:
    """The category of an import error's message (one node's problem, or
    the first of several)."""
    if "internal error" in message:
        return "internal"
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    detail = lines[1] if len(lines) > 1 and "cannot be imported" in lines[0] else lines[0]
    if detail.endswith(": not supported"):
        return "op"
    if "attribute" in detail:
        return "attribute"
    if "element type" in detail or "nn tensors are" in detail:
        return "dtype"
    if "known when the model is imported" in detail or "computed at run time" in detail:
        return "runtime-value"
    if "dynamic dimension" in detail or "static shapes" in detail or "rank" in detail:
        return "shape"
    if "is not a tensor" in detail:
        return "input"
    if "not supported" in detail:
        return "unsupported"
    return "internal"


def _rtol(stated: float, dtype) -> float:
    """The stated rtol, or two units in the last place of a 16-bit float
    type where that is more: the reference rounds every intermediate of an
    expanded (function-body) case to the output type, Lamina keeps some
    wider (a softmax's sum, an attention's scores)."""
    import ml_dtypes
    import numpy as np
    if dtype in (np.float16, ml_dtypes.bfloat16):
        return max(stated, 2 * float(ml_dtypes.finfo(dtype).eps))
    return stated


def _case_task(case):
    def task(report):
        import numpy as np
        from onnx import numpy_helper

        import lamina
        from lamina.diagnostics import CompileError

        try:
            module = lamina.from_onnx(case.model, params="constants", source_name=case.name)
        except CompileError as error:
            return classify(str(error)), str(error)
        try:
            function = lamina.compile(module)
        except CompileError as error:
            return "compile", str(error)
        def array(value):  # an array, a NumPy scalar or a TensorProto
            return np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else \
                numpy_helper.to_array(value)

        for inputs, outputs in case.data_sets:
            inputs = [array(a) for a in inputs]
            results = function(*inputs)
            results = list(results) if isinstance(results, tuple) else [results]
            if len(results) != len(outputs):
                return "wrong", f"{len(results)} results, expected {len(outputs)}"
            for i, (result, expected) in enumerate(zip(results, outputs)):
                expected = array(expected)
                if result.dtype != expected.dtype or result.shape != expected.shape:
                    return "wrong", (f"result {i}: {result.dtype}{list(result.shape)}, expected "
                                     f"{expected.dtype}{list(expected.shape)}")
                try:
                    if np.issubdtype(expected.dtype, np.inexact) or expected.dtype.kind == "V":
                        np.testing.assert_allclose(result.astype(np.float64),
                                                   expected.astype(np.float64),
                                                   rtol=_rtol(case.rtol, expected.dtype),
                                                   atol=case.atol)
                    else:
                        np.testing.assert_array_equal(result, expected)
                except AssertionError as error:
                    return "wrong", f"result {i}: {str(error).strip()[:600]}"
        return "pass", ""
    return task


def run_cases(names=None, jobs: int = 2, sample: bool = False) -> dict[str, tuple[str, str]]:
    """Runs the named cases (the CI sample where `sample`, all where None)
    in forked children of this process; returns each case's (outcome,
    detail)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases
        cases = {case.name: case for case in collect_testcases(None)}
    from lamina.fuzz_sandbox import result_of, run_children, warm_up, exception_of
    warm_up()
    # Imported once, before the children fork (the importer is otherwise
    # imported at its first use, by each child: from the file as it is then).
    import lamina.importers.onnx_import  # noqa: F401
    if names is None:
        names = [name for name in cases if in_sample(name) or not sample]
    names = sorted(names)
    outcomes = {}
    tasks = ((name, _case_task(cases[name])) for name in names)
    for outcome in run_children(tasks, jobs=jobs, timeout=TIMEOUT_SECONDS):
        result = result_of(outcome)
        if outcome.timed_out:
            outcomes[outcome.key] = ("timeout", outcome.describe())
        elif outcome.signal is not None:
            outcomes[outcome.key] = ("crash", f"{outcome.describe()}: "
                                     f"{outcome.stderr_tail[-600:]}")
        elif result is None:
            outcomes[outcome.key] = ("internal", exception_of(outcome) or outcome.describe())
        else:
            outcomes[outcome.key] = tuple(result)
    return outcomes


def run_in_fresh_process(sample: bool, jobs: int = 2) -> dict[str, tuple[str, str]]:
    """`run_cases` in a new Python process (a parent with no MLIR or OpenMP
    threads to fork from): the CI sample, or every case."""
    environment = dict(os.environ, LAMINA_CACHE="0", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, __file__, "--json", "-", "--jobs", str(jobs)]
                          + ([] if sample else ["--all"]),
                          capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        raise RuntimeError(f"the conformance run failed ({done.returncode}): "
                           f"{done.stderr[-3000:]}")
    return {name: tuple(outcome) for name, outcome in json.loads(done.stdout).items()}


def differences(outcomes: dict[str, tuple[str, str]], expected: dict[str, str]) -> list[str]:
    """Every case whose outcome is not what the expected list says."""
    problems = []
    for name, (outcome, detail) in sorted(outcomes.items()):
        listed = expected.get(name)
        if outcome in FAILURES:
            problems.append(f"{name}: {outcome}: {detail[:800]}")
        elif outcome == "pass" and listed is not None:
            problems.append(f"{name}: passes now; remove it from {EXPECTED_FAILURES.name}")
        elif outcome != "pass" and listed != outcome:
            problems.append(f"{name}: {outcome} ({detail.splitlines()[-1][:300]}), listed as "
                            f"{listed or 'passing'}")
    return problems


def summary(outcomes: dict[str, tuple[str, str]]) -> str:
    counts = Counter(outcome for outcome, _ in outcomes.values())
    total = len(outcomes)
    lines = [f"{total} cases: {counts['pass']} pass ({100 * counts['pass'] / max(total, 1):.1f}%)"]
    lines += [f"  {category}: {count}" for category, count in counts.most_common()
              if category != "pass"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every case, not the CI sample")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", metavar="FILE", help="write the outcomes ('-': stdout)")
    parser.add_argument("--write-expected", action="store_true",
                        help=f"rewrite {EXPECTED_FAILURES.name} from this run (with --all)")
    parser.add_argument("--outcomes", metavar="FILE",
                        help="read the outcomes of an earlier run (--json) instead of running")
    parser.add_argument("cases", nargs="*", help="run these cases only")
    args = parser.parse_args(argv)
    if args.outcomes:
        outcomes = {name: tuple(outcome)
                    for name, outcome in json.loads(Path(args.outcomes).read_text()).items()}
    else:
        outcomes = run_cases(args.cases or None, args.jobs, sample=not args.all)
    if args.json == "-":
        json.dump(outcomes, sys.stdout)
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(outcomes, indent=1))
    if args.write_expected:
        lines = [f"{name} {outcome}" for name, (outcome, _) in sorted(outcomes.items())
                 if outcome in CATEGORIES]
        EXPECTED_FAILURES.write_text(
            "# ONNX backend node tests that fail with a clear Lamina error: NAME CATEGORY\n"
            "# (test/pytest/onnx_conformance.py; a case that passes must leave the list)\n"
            + "\n".join(lines) + "\n")
    for problem in differences(outcomes, read_expected() if EXPECTED_FAILURES.exists() else {}):
        print(problem)
    print(summary(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
