"""lamina-run: compiles a `.mlir` file for the CPU or a GPU and runs one function.

    lamina-run model.mlir --random --check
    lamina-run model.mlir --entry f --inputs in.npz --output out.npz
    lamina-run model.mlir --random --seed 3 --bench
    lamina-run model.mlir --random --bind=parameters --bench
    lamina-run model.mlir --load-plugin=my_ops.py --random --check
    lamina-run kernel.mlir --target=cuda:sm_80 --emulate --inputs in.npz
    lamina-run model.mlir --random --check --bench --report=report.html
    lamina-run model.mlir --random --check --tune=30
    mpiexec -n 2 lamina-run sharded.mlir --distributed --random --check

`mpiexec -n N lamina-run FILE --distributed` runs a program sharded over a
grid of N devices (lamina.sharding): each rank takes its shard of the
global inputs and runs its partition; rank 0 gathers the results, prints
them, writes them with `--output` and, with `--check`, compares them with
the run of the same program in one process (its shardings erased), which
is what `lamina-run` without `--distributed` does.

`--target=cpu:aarch64` (any target of another architecture than this
machine's) builds the program for it, links it with the cross compiler and
runs it under emulation (`qemu-aarch64`; lamina.targets.cross), saying
so; `--bench`, `--profile`, `--tune` and `--bind` are for native targets.

`--target=cuda:ARCH` runs the target's hw kernels on this machine's GPU
through the CUDA driver (an error where there is no driver or GPU);
with `--emulate`, on the CPU through their emulation. Arguments that are
memrefs in global memory (an hw program's) are written in place: they are
printed after the run and saved as `arg0`, `arg1`, ... with `--output`.

A program with '?' dims takes its sizes from `--dims S=37,B=2` for
`--random`: each '?' dim is named by its argument's `nn.dims` attribute
(`%x: tensor<?x?x768xf32> {nn.dims = ["B", "S"]}`), else by position as
`ARG:DIM` (`--dims 0:1=37`); a call whose sizes break the program's rules
is an error at the op that states them.

Inputs come from an `.npz` file (arrays `arg0`, `arg1`, ...; a comma-
separated list of `.npy` files also works) or are random (`--random`,
reproducible with `--seed`: uniform in [-1, 1), and weights, the right
operands of matmuls and the filters of convolutions, scaled by their fan-in
as initialisers are). Results are printed, and written as `res0`, `res1`,
... with `--output`. `--check` compares every result with the NumPy
reference interpreter of the nn program and reports the worst error against
the tolerance of its element type (f16's for the f32 results of a program
with tf32 products, `precision = "tf32"`; exit 1 on a mismatch), with a warning
when a reference result is degenerate (constant, saturated, one-hot), so
that the check compares little; `--bench` prints
the compile time and the median run time. The entry defaults to `main` or
the only public function. `--bind=ARGS` binds arguments once (positions
or `lamina.parameter` names, comma-separated, or `parameters` for all the
named weights, `ArrayFunction.bind`): what depends on them alone runs once,
in an initialiser, and `--bench` times the calls with the other arguments.
`--report=FILE.html` writes the pipeline report
(lamina.report) with the check and benchmark numbers. `--tune=SECONDS`
first searches faster schedules (lamina.tuning) and prints what it
measured and chose on stderr; a second run of the same program loads it
from the cache of compiled programs (lamina.cache). Errors print as
`FILE:LINE:COL: error:`, the exit code is 1, and no output file is written.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import zipfile

import numpy as np

from mlir import ir

from lamina.diagnostics import (CompileError, UsageError, atomic_output, check_output_path,
                                locate_in_module, run_tool)
from lamina.parsing import parse_source, read_source
from lamina.plugins import add_plugin_arguments, load_plugins
from lamina.profile import measure
from lamina.reference import (coarsest, compare, degeneracy, evaluate, index_bounds,
                              random_inputs, weight_fan_ins)
from lamina.passes.nn_shard_erase import NNShardErase
from lamina.runtime import clone_module
from lamina.shapes import ShapeError, argument_shapes, dim_names, parse_dims
from lamina.targets import get_target
from lamina.tuning import budget, tune
from lamina.types import NUMPY_DTYPES, MemRefType, byte_size, numpy_dtype


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lamina-run", allow_abbrev=False,
        description="Compile an nn program for the CPU (or a GPU) and run it on NumPy arrays.")
    parser.add_argument("input", help="input .mlir file, '-' for stdin")
    parser.add_argument("--entry", default=None, help="the function to run")
    parser.add_argument("--target", default="cpu",
                        help="target spec (cpu, cpu:znver4, cpu:aarch64 (emulated), cpu:aarch64+sve, "
                             "cuda:sm_80, cuda:sm_90a; default cpu)")
    parser.add_argument("--emulate", action="store_true",
                        help="run a GPU target's kernels on the CPU through their emulation")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", default=None, metavar="IN.npz",
                        help="arguments: an .npz with arg0, arg1, ... (or a.npy,b.npy)")
    source.add_argument("--random", action="store_true", help="random arguments")
    parser.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    parser.add_argument("--dims", default=None, metavar="NAME=SIZE,...",
                        help="the sizes of the '?' dims for --random (names from the "
                             "arguments' nn.dims, or ARG:DIM)")
    parser.add_argument("--output", default=None, metavar="OUT.npz",
                        help="write the results as res0, res1, ... to an .npz")
    parser.add_argument("--check", action="store_true",
                        help="compare the results with the NumPy reference interpreter")
    parser.add_argument("--rtol", type=tolerance, default=None,
                        help="relative tolerance of --check")
    parser.add_argument("--atol", type=tolerance, default=None,
                        help="absolute tolerance of --check")
    parser.add_argument("--bench", action="store_true", help="print compile and run times")
    parser.add_argument("--profile", action="store_true",
                        help="time each fusion group (and op outside groups) alone, with the "
                             "layout changes it holds, and print the table (cpu targets)")
    parser.add_argument("--bind", default=None, metavar="ARGS",
                        help="bind these arguments once (comma-separated positions or names; "
                             "'parameters': every argument named lamina.parameter): what depends "
                             "on them alone runs once, and the run takes the others")
    parser.add_argument("--tune", type=budget, default=None, metavar="SECONDS",
                        help="search faster schedules for about SECONDS first (cpu target; "
                             "the choices are cached for later compiles)")
    parser.add_argument("--quiet", "-q", action="store_true", help="do not print the results")
    parser.add_argument("--distributed", action="store_true",
                        help="run a sharded program's partitions on the ranks of mpiexec; rank "
                             "0 gathers the results (--check: against the run in one process)")
    parser.add_argument("--report", default=None, metavar="FILE.html",
                        help="also write an HTML report of the compilation (IR and time of "
                             "every stage, fusion graph, kernels) with the check and "
                             "benchmark numbers")
    add_plugin_arguments(parser)
    return parser


def load_inputs(path: str, count: int) -> list[np.ndarray]:
    """Arguments from an .npz (arg0, arg1, ...) or from comma-separated .npy
    files. Arrays of an .npz the function does not take are named in a
    warning."""
    if os.path.isdir(path):
        raise UsageError(f"cannot read inputs from '{path}': it is a directory")
    try:
        if path.endswith(".npz"):
            return _load_archive(path, count)
        paths = [p for p in path.split(",") if p]
        if len(paths) != count:
            raise UsageError(f"{len(paths)} input file(s) given; the function takes {count}")
        return [np.load(p) for p in paths]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise UsageError(f"cannot read inputs from '{path}': {error or type(error).__name__} "
                         "(a truncated or damaged file?)") from None


def _load_archive(path: str, count: int) -> list[np.ndarray]:
    """The arrays arg0 ... arg{count-1} of an .npz file."""
    if not zipfile.is_zipfile(path):
        raise UsageError(f"cannot read inputs from '{path}': it is not an .npz file (not a zip "
                         "archive)")
    with zipfile.ZipFile(path) as archive:
        members = archive.namelist()
    others = [m for m in members if not m.endswith(".npy")]
    if others:
        raise UsageError(f"cannot read inputs from '{path}': {', '.join(others)} "
                         f"{'is not a .npy array' if len(others) == 1 else 'are not .npy arrays'}"
                         " (an .npz holds arg0.npy, arg1.npy, ...)")
    with np.load(path) as archive:
        names = archive.files
        missing = [f"arg{i}" for i in range(count) if f"arg{i}" not in names]
        if missing:
            raise UsageError(f"'{path}' has no array {missing[0]} (it has: "
                             f"{', '.join(names) or 'nothing'}); the function "
                             f"takes {count} argument(s)")
        arrays = []
        for index in range(count):
            array = archive[f"arg{index}"]
            if not isinstance(array, np.ndarray):
                raise UsageError(f"cannot read inputs from '{path}': arg{index}.npy is not a .npy "
                                 "array (it does not start with NumPy's header)")
            arrays.append(array)
    taken = {f"arg{i}" for i in range(count)}
    ignored = [name for name in names if name not in taken]
    if ignored:
        print(f"lamina-run: warning: '{path}' has array(s) the function does not take, ignored: "
              f"{', '.join(ignored)} (it takes {count} argument(s))", file=sys.stderr)
    return arrays


def _has_tf32_products(module) -> bool:
    """Whether the program has an nn.matmul with precision = "tf32"."""
    found = []

    def visit(op):
        if op.name == "nn.matmul" and "precision" in op.attributes \
                and ir.StringAttr(op.attributes["precision"]).value == "tf32":
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def tolerance(text: str) -> float:
    """A --rtol / --atol value: a finite number, zero or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid tolerance '{text}'") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"invalid tolerance '{text}': a tolerance is a finite "
                                         "number, zero or more")
    return value


def as_declared(arrays: list[np.ndarray], types) -> list[np.ndarray]:
    """Arrays of 2-byte raw elements given for bf16 arguments, as bf16: NumPy
    saves ml_dtypes' bfloat16 arrays as raw `V2` elements."""
    converted = []
    for array, spec in zip(arrays, types):
        dtype = numpy_dtype(spec.dtype) if spec.dtype in NUMPY_DTYPES else None
        if (dtype is not None and array.dtype.kind == "V" and array.dtype.fields is None
                and array.dtype.itemsize == dtype.itemsize):
            array = array.view(dtype)
        converted.append(array)
    return converted


def check_memory(module, available: int) -> None:
    """Raises CompileError at the first value (an argument, a result or an
    intermediate) larger than `available` bytes: the compiled code's
    allocation of it would fail and end the process."""
    too_large = []

    def visit(op):
        values = list(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.extend(block.arguments)
        for value in values:
            size = byte_size(value.type)
            if size is not None and size > available:
                too_large.append((op.location, value.type, size))
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if too_large:
        location, value_type, size = too_large[0]
        raise CompileError.at(location, f"a value of type {value_type} takes {size} bytes, more "
                              f"than this machine's {available} bytes of memory")


def check_inline_assembly(module, target) -> None:
    """Assembles a program with inline assembly once with llc (a
    subprocess) before the JIT does: the JIT reports an instruction it
    cannot assemble by ending the process, llc's error is located at the
    op."""
    found = []

    def visit(op):
        if op.name == "llvm.inline_asm":
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found or "asm" not in target.pipeline().stages:
        return
    probe = clone_module(module)
    try:
        target.emit(probe, "asm")
    except CompileError as error:
        raise locate_in_module(error, probe) from None


def physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _summary(array: np.ndarray) -> str:
    return np.array2string(array, threshold=64, edgeitems=3, precision=5)


def main(argv: list[str] | None = None) -> int:
    parser = _argument_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if options.distributed:
        # Every rank reads, verifies and compiles the program; rank 0 alone
        # reports what is wrong with it, and every rank exits 1.
        from lamina import sharding
        if sharding.communicator().Get_rank() != 0:
            try:
                return run(options)
            except (CompileError, UsageError):
                return 1
    return run(options)


def run(options) -> int:
    """The tool's work on parsed options."""
    if options.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {options.seed}")
    check_output_path(options.output)
    if options.report is not None:
        # Imported only here: the report's modules would slow every start.
        from lamina.report import check_report_path
        check_report_path(options.report)
    load_plugins(options.plugins)

    source_name, text = read_source(options.input)

    module = parse_source(text, source_name)
    shapes = dynamic_shapes(module, options)
    check_memory(module, physical_memory())
    try:
        target = get_target(options.target)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if options.emulate:
        if not hasattr(target, "emulation"):
            raise UsageError(f"target '{target.name}' has no emulation; --emulate is for GPU "
                             "targets")
        target = target.emulation()
    check_inline_assembly(module, target)
    if options.profile and (target.kind != "cpu" or options.distributed):
        raise UsageError(f"--profile is for runs on the cpu target, not '{target.name}'"
                         + (" with --distributed" if options.distributed else ""))
    if options.tune is not None and (target.kind != "cpu" or options.distributed):
        raise UsageError(f"--tune is for runs on the cpu target, not '{target.name}'"
                         + (" with --distributed" if options.distributed else ""))
    emulated = target.kind == "cpu" and not getattr(target, "native", True)
    if emulated:
        used = [flag for flag, value in (("--bench", options.bench), ("--profile", options.profile),
                                         ("--tune", options.tune is not None),
                                         ("--distributed", options.distributed),
                                         ("--bind", options.bind is not None)) if value]
        if used:
            raise UsageError(f"{used[0]} is not for '{target.name}': its code runs emulated on "
                             f"this machine, where times say nothing of the CPU and no weights "
                             f"are bound (run it with --check, --inputs, --output)")
    if options.distributed:
        return run_distributed(module, target, options)
    # Without --distributed a sharded program runs whole: its shardings go.
    NNShardErase().apply(module.operation)
    pipeline = target.pipeline()
    report = None
    if options.report:
        from lamina.report import CompileReport
        report = CompileReport(source_name, target.name)
        pipeline.observers.append(report)
    if options.tune is not None:
        function = tune(module, target, entry=options.entry, seconds=options.tune,
                        pipeline=pipeline)
        print(function.tuning.describe(), file=sys.stderr)
    else:
        function = target.compile(module, entry=options.entry, pipeline=pipeline)
    if emulated:
        print(f"run: emulated, {target.model.architecture_name} code for '{target.name}' under "
              f"{function.describe()}")
    plan = getattr(function, "memory_plan", None)
    if report is not None and plan is not None:
        report.add_benchmark("device memory plan: arena (peak beside the arguments)",
                             f"{plan['arena_bytes']} bytes for {plan['buffers']} buffers of "
                             f"{plan['buffer_bytes']} bytes")
    if report is not None and hasattr(function, "graph"):
        report.add_benchmark("launch graph", f"{len(function.graph.launches)} launches, "
                             f"{len(function.graph.commands)} commands on one stream")
    specs = function.inputs
    if shapes is not None:
        specs = [t.with_shape(shape) for t, shape in zip(specs, shapes)]
    arrays = arguments(options, module, function.name, specs)
    try:
        arrays = function.check_arguments(arrays)
    except (TypeError, ValueError) as error:
        raise UsageError(f"{options.inputs}: {error}") from None

    called, called_arrays = function, arrays
    if options.bind is not None:
        called, called_arrays = bind(function, arrays, options.bind)
    try:
        outputs = called(*called_arrays)
    except ShapeError as error:
        raise CompileError.at(error.location, error.message) from None
    results = list(outputs) if isinstance(outputs, tuple) else (
        [] if outputs is None else [outputs])

    written = {index: array for index, (array, spec) in enumerate(zip(arrays, function.inputs))
               if isinstance(spec, MemRefType)}
    if not options.quiet:
        for index, (array, spec) in enumerate(zip(results, function.results)):
            print(f"res{index}: {spec} =\n{_summary(array)}")
        for index, array in written.items():
            print(f"arg{index}: {function.inputs[index]} =\n{_summary(array)}")

    failed = False
    if options.check:
        expected = evaluate(module, arrays, function.name)
        tf32 = _has_tf32_products(module)
        for index, (array, reference, spec) in enumerate(zip(results, expected,
                                                             function.results)):
            # A product the program lets be rounded to tf32 (10 mantissa
            # bits, as f16's) is held to f16's tolerance: the reference
            # rounds its operands, the cpu target does not.
            dtype = coarsest(spec.dtype, "f16") if tf32 and spec.dtype == "f32" else spec.dtype
            comparison = compare(array, reference, dtype, options.rtol, options.atol)
            line = f"check res{index} ({spec}): {comparison}"
            print(line)
            failed |= not comparison.ok
            why = degeneracy(reference)
            if why is not None:
                print(f"lamina-run: warning: res{index} checks little, its reference is {why}",
                      file=sys.stderr)
            if report is not None:
                report.checks.append(line)
        print("check: " + ("FAILED" if failed else "all results match the reference"))

    if options.bench:
        times = measure(called, called_arrays, warmup_seconds=0.1, min_seconds=0.5)
        print(f"compile: {called.compile_seconds * 1e3:.1f} ms")
        print(f"run: median {statistics.median(times) * 1e3:.4g} ms, min "
              f"{min(times) * 1e3:.4g} ms over {len(times)} runs")
        if report is not None:
            report.add_benchmark("compile (pipeline and JIT)",
                                 f"{function.compile_seconds * 1e3:.1f} ms")
            report.add_benchmark("run, median", f"{statistics.median(times) * 1e3:.4g} ms")
            report.add_benchmark("run, minimum", f"{min(times) * 1e3:.4g} ms")
            report.add_benchmark("runs", str(len(times)))

    if options.profile:
        from lamina.profile import profile
        found = profile(module, target, entry=function.name, seed=options.seed,
                        whole=function, arrays=arrays)
        print(found.describe())
        if report is not None:
            report.profile = found

    if failed:
        return 1
    if report is not None:
        from lamina.report import write_report
        write_report(report, options.report, "lamina-run")
    if options.output:
        with atomic_output(options.output, binary=True) as out:
            np.savez(out, **{f"res{i}": r for i, r in enumerate(results)},
                     **{f"arg{i}": a for i, a in written.items()})
    return 0


def dynamic_shapes(module, options) -> list[tuple[int, ...]] | None:
    """The argument shapes `--dims` gives the entry's '?' dims (None for an
    entry without them, or inputs read from a file)."""
    from lamina.runtime import find_entry
    func = find_entry(module, options.entry)
    names = [name for group in dim_names(func) for name in group]
    if not names:
        if options.dims is not None:
            raise UsageError("--dims: the entry function has no '?' dims")
        return None
    if options.inputs:
        return None
    if options.dims is None:
        raise UsageError(f"the entry function has '?' dims ({', '.join(dict.fromkeys(names))}): "
                         "give their sizes with --dims NAME=SIZE,...")
    try:
        return argument_shapes(func, parse_dims(options.dims))
    except ValueError as error:
        raise UsageError(str(error)) from None


def bind(function, arrays: list[np.ndarray], spec: str):
    """`--bind=ARGS`: the function with those of `arrays` bound, and the
    other arrays."""
    names = list(function.argument_names)
    if spec.strip() == "parameters":
        positions = [i for i, name in enumerate(names) if name is not None]
    else:
        positions = []
        for item in (i.strip() for i in spec.split(",")):
            if item.isdigit() and int(item) < len(arrays):
                positions.append(int(item))
            elif item in names:
                positions.append(names.index(item))
            else:
                known = ", ".join(n for n in names if n) or "none"
                raise UsageError(f"--bind: @{function.name} has no argument '{item}' (arguments "
                                 f"0 to {len(arrays) - 1}; names: {known})")
    try:
        bound = function.bind({i: arrays[i] for i in positions})
    except (TypeError, ValueError) as error:
        raise UsageError(f"--bind: {error}") from None
    return bound, [a for i, a in enumerate(arrays) if i not in positions]


def arguments(options, module, name: str, specs) -> list[np.ndarray]:
    """The arguments of function `name` (of types `specs`): read from
    `--inputs`, or drawn with `--random` (weights at their fan-in's scale)."""
    if options.inputs:
        return as_declared(load_inputs(options.inputs, len(specs)), specs)
    if options.random or not specs:
        return random_inputs(specs, options.seed, weight_fan_ins(module, name),
                             index_bounds(module, name))
    raise UsageError(f"@{name} takes {len(specs)} argument(s): give --inputs IN.npz or --random")


def run_distributed(module, target, options) -> int:
    """`--distributed`: one partition per MPI rank on the shards of the
    global inputs; rank 0 gathers, prints, checks and writes the results.
    Errors are reported by rank 0 only (`main`); every rank exits 1."""
    from lamina import sharding
    comm = sharding.communicator()
    if target.kind != "cpu":
        raise UsageError(f"--distributed runs on the cpu target, not '{target.name}'")
    function = sharding.compile(module, entry=options.entry, target=options.target,
                                comm=comm)
    arrays = arguments(options, module, function.name, function.global_inputs)
    for index, (array, spec) in enumerate(zip(arrays, function.global_inputs)):
        if array.shape != spec.shape or array.dtype != np.dtype(numpy_dtype(spec.dtype)):
            raise UsageError(f"{options.inputs}: @{function.name} argument #{index}: "
                             f"expected {spec}, got a {array.dtype.name} array of shape "
                             f"{array.shape}")
    # The run in one process that --check compares with, compiled
    # before anything runs.
    reference = (target.compile(module, entry=options.entry)
                 if options.check and comm.Get_rank() == 0 else None)
    results = function.run(arrays)
    if results is None:
        return 0
    if not options.quiet:
        for index, (array, spec) in enumerate(zip(results, function.global_results)):
            print(f"res{index}: {spec} =\n{_summary(array)}")
    failed = False
    if options.check:
        expected = reference(*arrays)
        expected = list(expected) if isinstance(expected, tuple) else [expected]
        for index, (array, reference, spec) in enumerate(zip(results, expected,
                                                             function.global_results)):
            comparison = compare(array, reference, spec.dtype, options.rtol, options.atol)
            print(f"check res{index} ({spec}): {comparison}")
            failed |= not comparison.ok
        print(f"check: {comm.Get_size()} ranks " + (
            "FAILED" if failed else "match the run in one process"))
    if failed:
        return 1
    if options.output:
        with atomic_output(options.output, binary=True) as out:
            np.savez(out, **{f"res{i}": r for i, r in enumerate(results)})
    return 0


def entry() -> None:
    sys.exit(run_tool(main, prog="lamina-run"))


if __name__ == "__main__":
    entry()
