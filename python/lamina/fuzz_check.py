"""Differential checking of generated programs: each program runs in every
configuration and each result is compared with the float64 NumPy reference.

A configuration is a named way of computing a program's results. The list
is meant to grow (a new schedule, a GPU target's emulation); each one says
what it is compared with:

    CONFIGURATIONS.append(Configuration(
        "cpu-my-schedule", compiled(my_pipeline), "my schedule"))

* `reference` (the interpreter in the program's precision) and every
  compiled configuration are held to the float64 reference (`reference-f64`,
  the interpreter in float64), at the tolerance of the coarsest element type
  each result depends on, grown with the length of its reductions and the
  depth of its computation; `atol` is scaled by the largest magnitude of
  any value it depends on (so cancellation in a sum compares fairly);
* a configuration with `same_as` must also equal that one exactly (the
  same passes run in mlir-opt give the same code);
* `every=N` runs a slow configuration on one program in N;
* a configuration with `unsupported` (a function of an error's text giving
  the reason, or None) says which of its errors mean that it does not
  cover the program yet (an op a GPU target does not lower): those are
  `unsupported` verdicts, counted by reason, and not findings.

`check_program` runs one program in the calling process and returns its
verdicts; `lamina.fuzz_campaign` runs it in a child process per program.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from lamina.fuzz import Program, reduction_length
from lamina.reference import PRECISIONS, Comparison, coarsest, compare, tolerance

Runner = Callable[[str, list], list]


@dataclass
class Configuration:
    """A named way to compute a program's results from its text and inputs."""

    name: str
    run: Runner
    description: str = ""
    same_as: str | None = None
    every: int = 1
    compiled: bool = True
    unsupported: Callable[[str], str | None] | None = None

    def applies_to(self, index: int) -> bool:
        return index % self.every == 0


def compiled(make_pipeline: Callable[[], object] | None = None) -> Runner:
    """A runner compiling with `lamina.compile` (the CPU target's default
    pipeline, or the one `make_pipeline()` returns) and calling the result."""
    def run(text: str, inputs: list) -> list:
        import lamina
        pipeline = make_pipeline() if make_pipeline is not None else None
        function = lamina.compile(text, pipeline=pipeline)
        outputs = function(*inputs)
        return list(outputs) if isinstance(outputs, tuple) else [outputs]
    return run


def emulated(target: str) -> Runner:
    """A runner compiling for the GPU `target` and running its kernels in
    the CPU emulation (`lamina-run --target=TARGET --emulate`)."""
    def run(text: str, inputs: list) -> list:
        from lamina.parsing import parse_source
        from lamina.targets import get_target
        function = get_target(target).emulation().compile(parse_source(text, "<fuzz>"))
        outputs = function(*inputs)
        return list(outputs) if isinstance(outputs, tuple) else [outputs]
    return run


def cross_compiled(target: str) -> Runner:
    """A runner compiling for a CPU `target` of another architecture and
    running it under emulation (lamina.targets.cross); on a machine of that
    architecture, natively."""
    def run(text: str, inputs: list) -> list:
        import lamina
        function = lamina.compile(text, target=target)
        outputs = function(*inputs)
        return list(outputs) if isinstance(outputs, tuple) else [outputs]
    return run


_NO_EMULATOR = re.compile(r"running (\w+) code on this machine needs|has no C library to link")


def no_emulator(error: str) -> str | None:
    """`no emulator` when an emulated run's error says that QEMU or the
    cross compiler is missing here, else None."""
    return "no emulator or cross compiler" if _NO_EMULATOR.search(error) else None


_NOT_LOWERED = re.compile(r"'([\w.]+)' is not lowered to hw kernels")


def not_lowered(error: str) -> str | None:
    """`'nn.OP' not lowered` when a GPU target's error says that it has no
    kernel for an op of the program, else None."""
    match = _NOT_LOWERED.search(error)
    return f"'{match.group(1)}' not lowered" if match else None


def interpreted(precision: str | None) -> Runner:
    def run(text: str, inputs: list) -> list:
        from lamina.parsing import parse_source
        from lamina.reference import evaluate
        return evaluate(parse_source(text, "<fuzz>"), inputs, "main", precision)
    return run


def isolated_pipeline():
    """The CPU pipeline with every MLIR stage's upstream passes in mlir-opt."""
    from lamina.pipeline import Pipeline
    pipeline = Pipeline.for_target("cpu")
    for name in pipeline.mlir_stages:
        pipeline.stage(name).isolated = True
    return pipeline


def qdq_pipeline():
    """The CPU pipeline with nn-fuse-qdq after nn-canonicalize: quantised
    matmuls and convolutions as integer ones."""
    from lamina.pipeline import Pipeline
    from lamina.pass_registry import get_pass
    pipeline = Pipeline.for_target("cpu")
    pipeline.insert_after("nn-canonicalize", get_pass("nn-fuse-qdq"), stage="nn")
    return pipeline


def unfused_pipeline():
    """The CPU pipeline without fusion groups (nn-decompose and nn-fuse
    removed, where the pipeline has them)."""
    from lamina.pipeline import Pipeline
    pipeline = Pipeline.for_target("cpu")
    for name in ("nn-fuse", "nn-decompose"):
        try:
            pipeline.remove(name)
        except KeyError:
            pass
    return pipeline


def serial_pipeline():
    """The CPU pipeline scheduling for one thread (where it has threads)."""
    from lamina.pipeline import Pipeline
    from lamina.pass_registry import find_pass
    pipeline = Pipeline.for_target("cpu")
    if find_pass("cpu-schedule") is not None:
        try:
            pipeline.replace("cpu-schedule", find_pass("cpu-schedule")(threads=1))
        except (KeyError, TypeError):
            pass
    return pipeline


def replayed(text: str) -> Callable:
    """A Python function that builds the program `text`'s `@main` where it
    is called (inside a trace of `lamina.jit`): its ops, cloned in order
    with their operands remapped to the arguments and earlier clones."""
    def main(*arguments):
        from mlir import ir
        module = ir.Module.parse(text)        # in the tracing context
        body = next(op for op in module.body.operations
                    if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        block = body.regions[0].blocks[0]
        values = {}
        for old, new in zip(block.arguments, arguments):
            values[old] = new
        for op in block.operations:
            if op.name == "func.return":
                return tuple(values[v] for v in op.operands)
            clone = op.clone()
            for index, operand in enumerate(op.operands):
                clone.operands[index] = values[operand]
            for old, new in zip(op.results, clone.results):
                values[old] = new
        raise ValueError("@main has no func.return")
    return main


# Threads of `jit-threads`: enough that compiles overlap on two cores.
JIT_THREADS = 4


def jit_threads(threads: int = JIT_THREADS) -> Runner:
    """A runner calling one `@lamina.jit` function of the program from
    `threads` threads released together, so that its first compile happens
    from all of them at once. Every thread's results must equal the first
    thread's bit for bit (the same program, compiled the same way); a
    thread's exception is raised, an abort kills the child (a crash)."""
    def run(text: str, inputs: list) -> list:
        import threading

        import lamina
        function = lamina.jit(replayed(text))
        start = threading.Barrier(threads)
        results: list = [None] * threads
        errors: list = [None] * threads

        def call(index: int) -> None:
            try:
                start.wait()
                outputs = function(*[a.copy() for a in inputs])
                results[index] = list(outputs) if isinstance(outputs, tuple) else [outputs]
            except BaseException as error:  # noqa: BLE001 - reported below, in the caller
                errors[index] = error

        workers = [threading.Thread(target=call, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        for index, error in enumerate(errors):
            if error is not None:
                raise RuntimeError(f"thread {index} of {threads}: "
                                   f"{type(error).__name__}: {error}") from error
        for index in range(1, threads):
            differs = identical(results[index], results[0])
            if differs is not None:
                raise RuntimeError(f"thread {index} of {threads}: result #{differs} differs "
                                   "from thread 0's bit for bit")
        return results[0]
    return run


REFERENCE = Configuration("reference-f64", interpreted("f64"),
                          "the NumPy interpreter in float64: what every result is compared with",
                          compiled=False)
CONFIGURATIONS: list[Configuration] = [
    Configuration("reference", interpreted(None),
                  "the NumPy interpreter in the program's element types", compiled=False),
    Configuration("cpu", compiled(), "the CPU target's default pipeline, JIT-compiled"),
    Configuration("cpu-unfused", compiled(unfused_pipeline),
                  "the CPU pipeline without fusion groups", every=4),
    Configuration("cpu-serial", compiled(serial_pipeline),
                  "the CPU pipeline scheduled for one thread", every=4),
    Configuration("cpu-fuse-qdq", compiled(qdq_pipeline),
                  "the CPU pipeline with nn-fuse-qdq (QDQ matmuls and convolutions as "
                  "integer ones)", every=4),
    Configuration("cpu-isolated", compiled(isolated_pipeline),
                  "the CPU pipeline with upstream passes run in mlir-opt", same_as="cpu",
                  every=10),
    Configuration("jit-threads", jit_threads(),
                  f"one @lamina.jit function called from {JIT_THREADS} threads at once, "
                  "compiling concurrently; every thread's result checked", every=4),
    Configuration("aarch64", cross_compiled("cpu:aarch64"),
                  "the cpu:aarch64 pipeline (NEON), run under qemu-aarch64; unsupported where "
                  "QEMU or the cross compiler is missing", every=4, unsupported=no_emulator),
    Configuration("aarch64-sve", cross_compiled("cpu:aarch64+sve"),
                  "the cpu:aarch64+sve pipeline (vector-length agnostic SVE), run under "
                  "qemu-aarch64 at 256 bits", every=8, unsupported=no_emulator),
    Configuration("cuda-emulate", emulated("cuda:sm_80"),
                  "the cuda:sm_80 pipeline's hw kernels run in the CPU emulation; programs "
                  "with an op it does not lower are counted as unsupported", every=4,
                  unsupported=not_lowered),
]


def configurations(names: Sequence[str] | None = None) -> list[Configuration]:
    """The configurations of the given names (all by default); raises
    ValueError for an unknown name."""
    if names is None:
        return list(CONFIGURATIONS)
    known = {c.name: c for c in CONFIGURATIONS}
    missing = [n for n in names if n not in known]
    if missing:
        raise ValueError(f"unknown configuration '{missing[0]}' (known: {', '.join(known)})")
    return [known[n] for n in names]


# ---------------------------------------------------------------------------
# Verdicts.


@dataclass
class Verdict:
    """One finding (or `ok`): `kind` is `ok`, `mismatch` (a result differs
    from the reference or from `same_as`), `error` (a configuration
    rejected or failed on a valid program), `invalid` (Lamina's verifier
    rejects a generated program), `crash` or `timeout` (the child died);
    `unsupported` (a configuration does not cover the program yet: its
    `detail` is the reason) is not a finding."""

    kind: str
    configuration: str = ""
    detail: str = ""
    output: int | None = None
    worst_ratio: float = 0.0

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "unsupported")

    def signature(self) -> tuple:
        """What a reduced program must keep to fail the same way."""
        return (self.kind, self.configuration, self.detail.split("\n")[0][:60]
                if self.kind in ("error", "invalid") else "")

    def __str__(self) -> str:
        where = f" in {self.configuration}" if self.configuration else ""
        which = f" (result #{self.output})" if self.output is not None else ""
        return f"{self.kind}{where}{which}: {self.detail}"


@dataclass
class ResultTolerance:
    """How one result of a program is compared with the reference."""

    dtype: str
    rtol: float
    atol: float
    scale: float


def tolerances(program: Program, magnitudes: dict[str, float]) -> list[ResultTolerance]:
    """Per result: the coarsest float type it depends on, the total length
    of the reductions it depends on, its depth, and the largest magnitude
    among the values it depends on (from the float64 run)."""
    types = program.types()
    found = []
    for name in program.outputs:
        ops = program.backward_slice(name)
        names = {o for op in ops for o in op.operands} | {name}
        dtypes = [types[n].dtype for n in names if n in types]
        dtype = coarsest(*[d for d in dtypes if d in PRECISIONS] or [types[name].dtype])
        if any(op.kind == "nn.matmul" and op.attrs.get("precision") == "tf32" for op in ops):
            dtype = coarsest(dtype, "f16")  # tf32 keeps f16's 10 mantissa bits
        if types[name].dtype not in PRECISIONS:
            dtype = types[name].dtype
        length = sum(reduction_length(op, types) for op in ops if reduction_length(op, types) > 1)
        rtol, atol = tolerance(dtype, max(length, 1))
        depth = max(1, _depth(program, name))
        growth = 1.0 + depth / 4
        scale = max([1.0] + [magnitudes.get(n, 0.0) for n in names])
        found.append(ResultTolerance(dtype, rtol * growth, atol * growth, scale))
    return found


def _depth(program: Program, name: str) -> int:
    producers = program.producers()
    memo: dict[str, int] = {}

    def depth(value: str) -> int:
        if value not in memo:
            op = producers.get(value)
            memo[value] = 0 if op is None else 1 + max([depth(o) for o in op.operands] or [0])
        return memo[value]

    return depth(name)


def program_inputs(program: Program, seed: int) -> list[np.ndarray]:
    """The arguments the fuzzer runs a program on: `lamina-run --random
    --seed SEED`'s (uniform in [-1, 1), weights scaled by their fan-in), so
    that a finding reproduces."""
    from lamina.diagnostics import CompileError
    from lamina.parsing import parse_source
    from lamina.reference import random_inputs, weight_fan_ins
    from lamina.types import TensorType
    types = program.types()
    try:
        fan_ins = weight_fan_ins(parse_source(program.text(), "<fuzz>"), "main")
    except CompileError:  # a program that does not verify: its verdict comes later
        fan_ins = None
    return random_inputs([TensorType(tuple(d.size for d in types[n].shape), types[n].dtype)
                          for n in program.inputs], seed, fan_ins)


def _magnitudes(program: Program, module, inputs: list) -> tuple[list, dict[str, float]]:
    """The float64 reference's results and the largest finite magnitude of
    every value of the program."""
    from lamina.reference import Interpreter
    magnitudes: dict[str, float] = {}
    for name, array in zip(program.inputs, inputs):
        magnitudes[name] = _largest(array)
    ops = iter(program.ops)

    def observe(op, arrays):
        mine = next(ops)
        for name, array in zip(mine.results, arrays):
            magnitudes[name] = _largest(array)

    results = Interpreter(module, "f64", observe).call("main", list(inputs))
    return results, magnitudes


def _largest(array) -> float:
    values = np.abs(np.asarray(array, dtype=np.float64))
    values = values[np.isfinite(values)]
    return float(values.max()) if values.size else 0.0


def compare_results(actual: list, expected: list, limits: list[ResultTolerance]
                    ) -> tuple[int, Comparison] | None:
    """The first result (index, comparison) that exceeds its tolerance, or None."""
    if len(actual) != len(expected):
        return -1, Comparison(math.inf, math.inf, 0, 0, 1, 1)
    for index, (a, e, limit) in enumerate(zip(actual, expected, limits)):
        a = np.asarray(a)
        comparison = compare(a, np.asarray(e), limit.dtype, limit.rtol, limit.atol,
                             limit.scale)
        if not comparison.ok:
            return index, comparison
    return None


def identical(a: list, b: list) -> int | None:
    """The index of the first result that differs bit for bit (NaNs equal), or None."""
    for index, (x, y) in enumerate(zip(a, b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return index
        if x.dtype.kind == "f" or x.dtype.itemsize == 2:
            xf, yf = x.astype(np.float64), y.astype(np.float64)
            same = (xf == yf) | (np.isnan(xf) & np.isnan(yf))
        else:
            same = x == y
        if not np.all(same):
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def check_program(program: Program, index: int = 0,
                  chosen: Sequence[Configuration] | None = None,
                  report: Callable[[object], None] = lambda message: None) -> list[Verdict]:
    """Runs a program in every configuration that applies to it (`index`
    picks the sampled ones) and returns the findings (an `ok` verdict if
    there are none). `report(("start", name))` is called before each
    configuration runs, so that a parent knows where a child died."""
    from lamina.diagnostics import CompileError
    chosen = configurations() if chosen is None else chosen
    text = program.text()
    inputs = program_inputs(program, program.seed)
    from lamina.parsing import parse_source
    report(("start", REFERENCE.name))
    try:
        module = parse_source(text, "<fuzz>")
    except CompileError as error:
        return [Verdict("invalid", "verifier", str(error))]
    try:
        expected, magnitudes = _magnitudes(program, module, inputs)
    except CompileError as error:
        return [Verdict("error", REFERENCE.name, str(error))]
    limits = tolerances(program, magnitudes)
    verdicts: list[Verdict] = []
    results: dict[str, list] = {}
    for configuration in chosen:
        if not configuration.applies_to(index):
            continue
        report(("start", configuration.name))
        try:
            actual = configuration.run(text, [a.copy() for a in inputs])
        except CompileError as error:
            reason = configuration.unsupported and configuration.unsupported(str(error))
            verdicts.append(Verdict("unsupported", configuration.name, reason) if reason
                            else Verdict("error", configuration.name, str(error)))
            continue
        except Exception as error:  # noqa: BLE001 - any failure on a valid program is a finding
            verdicts.append(Verdict("error", configuration.name,
                                    f"{type(error).__name__}: {error}"))
            continue
        results[configuration.name] = actual
        mismatch = compare_results(actual, expected, limits)
        if mismatch is not None:
            output, comparison = mismatch
            verdicts.append(Verdict("mismatch", configuration.name,
                                    f"vs {REFERENCE.name}: {comparison}", output,
                                    comparison.worst_ratio))
        if configuration.same_as and configuration.same_as in results:
            differs = identical(actual, results[configuration.same_as])
            if differs is not None:
                verdicts.append(Verdict("mismatch", configuration.name,
                                        f"differs from {configuration.same_as} bit for bit",
                                        differs))
    if all(verdict.kind == "unsupported" for verdict in verdicts):
        verdicts.append(Verdict("ok"))
    return verdicts
