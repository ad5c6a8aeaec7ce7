"""Sharded programs: grids and shardings in the Python API, and runs on MPI.

A program says how its values are split over a grid of devices with
upstream MLIR's `shard` dialect, in `.mlir` files:

    shard.grid @g(shape = 2)
    %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
    %w = shard.shard %w1 to %s annotate_for_users : tensor<64x128xf32>

or in traced Python functions:

    g = lamina.grid("g", (2,))
    @lamina.jit
    def mlp(x, w1, w2):
        h = nn.relu(x @ lamina.shard(w1, g, [[], [0]]))     # W1 by columns
        return h @ lamina.shard(w2, g, [[0]])               # W2 by rows

`split_axes[d]` lists the grid axes tensor axis `d` is split over (`[]`:
replicated). The CPU pipeline's `partitioned` stage (`nn-shard-partition`)
turns such a program into the program of one rank; in one process (`lamina.compile`,
`lamina-run` without `--distributed`) the shardings are erased instead, and
the program computes the same values whole.

Under `mpiexec -n N` (N the number of devices of the grid), `compile`
below makes a callable on the global arrays: each rank takes its shard of
every argument, runs its partition (the collectives are MPI calls, in the
`mpich` library of the `dist` extra), and rank 0 gathers the results:

    f = lamina.sharding.compile(mlp.trace(x, w1, w2))
    y = f(x, w1, w2)              # the global result on rank 0, None elsewhere

Ranks are numbered like the grid's devices, row-major (rank r of a grid of
shape (2, 3) is device (r // 3, r % 3)).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from mlir import ir
from mlir.dialects import shard as shard_dialect

from lamina.diagnostics import CompileError, UsageError
from lamina.parsing import parse
from lamina.passes.nn_shard_partition import annotate, grid_of, grids
from lamina.passes.nn_shard_partition import split_axes_of as axes_of_sharding
from lamina.runtime import clone_module, find_entry, signature

DIST_HINT = "install Lamina's 'dist' extra (pip install 'lamina[dist]': mpich and mpi4py)"


# ---------------------------------------------------------------------------
# Verification: what upstream's shard verifiers let through and its
# partitioning then divides by or indexes with.


def check_shardings(operations: Sequence[ir.Operation]) -> bool:
    """Reports, at the op, a grid with an axis of no devices, a sharding
    that splits over an axis its grid does not have, and a `shard.shard`
    that splits more axes than its tensor has or an axis its devices do not
    divide (of the `shard` dialect's ops `operations`, as the verifier's
    walk found them). Runs before any pass: in one process the shardings
    are erased, and partitioning would crash on them. Returns success."""
    ok = True
    grid_shapes: dict[str, tuple[int, ...]] = {}
    for op in operations:
        if op.name == "shard.grid":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            shape = tuple(ir.DenseI64ArrayAttr(op.attributes["shape"]))
            grid_shapes[name] = shape
            if any(size < 1 for size in shape):
                sizes = ", ".join("?" if size < 0 else str(size) for size in shape)
                op.location.emit_error(f"grid @{name} of shape [{sizes}] has no devices along an "
                                       "axis: a grid's sizes must be static and positive")
                ok = False
    if not ok:
        return False
    for op in operations:
        if op.name == "shard.sharding":
            grid_shape = grid_shapes.get(grid_of(op))
            if grid_shape is None:
                continue
            for axes in axes_of_sharding(op):
                beyond = [a for a in axes if not 0 <= a < len(grid_shape)]
                if beyond:
                    op.location.emit_error(f"split axis {beyond[0]} is not an axis of grid "
                                           f"@{grid_of(op)} of shape {list(grid_shape)}")
                    ok = False
                    break
    if not ok:
        return False
    for op in operations:
        if op.name != "shard.shard":
            continue
        sharding = op.operands[1].owner
        if isinstance(sharding, ir.Block) or sharding.name != "shard.sharding":
            continue
        grid_shape = grid_shapes.get(grid_of(sharding))
        if grid_shape is None:
            continue
        tensor_type = op.operands[0].type
        shape = ir.RankedTensorType(tensor_type).shape
        split_axes = axes_of_sharding(sharding)
        if len(split_axes) > len(shape):
            op.location.emit_error(f"sharding splits {len(split_axes)} axes of {tensor_type}, "
                                   f"which has {len(shape)} (split_axes {split_axes})")
            ok = False
            continue
        for axis, axes in enumerate(split_axes):
            parts = math.prod(grid_shape[a] for a in axes)
            if parts > 1 and shape[axis] % parts:
                op.location.emit_error(
                    f"axis {axis} of {tensor_type} has size {shape[axis]}, which the {parts} "
                    f"devices of grid @{grid_of(sharding)} (axes {axes}) do not divide")
                ok = False
                break
    return ok


# ---------------------------------------------------------------------------
# The Python API: grids and shardings in traced functions.


@dataclass(frozen=True)
class Grid:
    """A grid of devices: its symbol name and shape."""

    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def grid(name: str, shape: int | Sequence[int]) -> Grid:
    """A grid of devices named `name` (the `shard.grid` symbol) of `shape`."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if not name.isidentifier():
        raise ValueError(f"a grid name must be an identifier, got '{name}'")
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"a grid's shape must be positive sizes, got {shape}")
    return Grid(name, shape)


def _module_of(block: ir.Block) -> ir.Operation:
    op = block.owner
    while op.name != "builtin.module":
        op = op.parent
    return op


def shard(x, on: Grid, split_axes: Sequence[Sequence[int]]):
    """`x` annotated for its users as split over the grid `on`:
    `split_axes[d]` are the grid axes tensor axis `d` is split over. For
    use inside a function traced by `lamina.jit`."""
    from lamina.nn import API_FILES, Tensor, _caller_location
    API_FILES.add(os.path.abspath(__file__))
    location = _caller_location()
    axes = [[int(a) for a in group] for group in split_axes]
    rank = len(ir.RankedTensorType(x.type).shape)
    if len(axes) > rank:
        raise CompileError.at(location, f"split_axes {axes} has {len(axes)} entries for a "
                                        f"tensor of rank {rank}")
    for group in axes:
        for a in group:
            if not 0 <= a < len(on.shape):
                raise CompileError.at(location, f"grid axis {a} is not an axis of grid "
                                                f"@{on.name} of shape {list(on.shape)}")
    module = _module_of(ir.InsertionPoint.current.block)
    body = module.regions[0].blocks[0]
    existing = grids(module)
    if on.name not in existing:
        with ir.InsertionPoint.at_block_begin(body), location:
            shard_dialect.GridOp(on.name, list(on.shape))
    elif existing[on.name] != on.shape:
        raise CompileError.at(location, f"grid @{on.name} is declared twice, with shapes "
                                        f"{list(existing[on.name])} and {list(on.shape)}")
    with location:
        annotated = annotate(x, on.name, axes)
    return Tensor(annotated)


# ---------------------------------------------------------------------------
# MPI.


def mpi_library() -> str:
    """The path of the MPI library (libmpi.so.N of the `mpich` wheel; its
    libmpi.so is a linker script). Raises UsageError when it is missing."""
    import importlib.metadata  # slow to import: only where MPI is looked for
    try:
        files = importlib.metadata.files("mpich") or []
    except importlib.metadata.PackageNotFoundError:
        raise UsageError(f"running on MPI needs the MPI library: {DIST_HINT}") from None
    for file in files:
        if re.fullmatch(r"libmpi\.so\.\d+", os.path.basename(str(file))):
            path = os.path.realpath(str(file.locate()))
            if os.path.exists(path):
                return path
    raise UsageError(f"the mpich package has no libmpi.so.N: {DIST_HINT}")


def communicator():
    """MPI_COMM_WORLD from mpi4py (which initialises MPI). Raises UsageError
    when mpi4py is missing."""
    mpi_library()
    try:
        from mpi4py import MPI
    except ImportError:
        raise UsageError(f"running on MPI needs mpi4py: {DIST_HINT}") from None
    return MPI.COMM_WORLD


# ---------------------------------------------------------------------------
# Shards of global arrays.


def split_axes_of(func: ir.Operation, what: str) -> list[list[list[int]]]:
    """The `lamina.split_axes` that `nn-shard-partition` recorded on a
    function's arguments (`what="arg"`) or results (`"res"`)."""
    key = f"{what}_attrs"
    if key not in func.attributes:
        return []
    found = []
    for entry in ir.ArrayAttr(func.attributes[key]):
        entry = ir.DictAttr(entry)
        axes = []
        if "lamina.split_axes" in entry:
            axes = [[ir.IntegerAttr(a).value for a in ir.ArrayAttr(group)]
                    for group in ir.ArrayAttr(entry["lamina.split_axes"])]
        found.append(axes)
    return found


def device_index(rank: int, grid_shape: Sequence[int]) -> tuple[int, ...]:
    """The grid position of an MPI rank (row-major)."""
    return tuple(int(i) for i in np.unravel_index(rank, tuple(grid_shape)))


def shard_slices(shape: Sequence[int], split_axes: Sequence[Sequence[int]],
                 grid_shape: Sequence[int], rank: int) -> tuple[slice, ...]:
    """The slices of a global array of `shape` that `rank` holds."""
    position = device_index(rank, grid_shape)
    slices = []
    for axis, size in enumerate(shape):
        axes = list(split_axes[axis]) if axis < len(split_axes) else []
        parts = math.prod(grid_shape[a] for a in axes)
        block = 0
        for a in axes:
            block = block * grid_shape[a] + position[a]
        length = size // parts
        slices.append(slice(block * length, (block + 1) * length))
    return tuple(slices)


# ---------------------------------------------------------------------------
# Distributed functions.


class DistributedFunction:
    """One rank's partition of a sharded program, callable on the global
    arrays under mpiexec: see the module docstring."""

    def __init__(self, compiled, global_inputs, global_results, input_axes, result_axes,
                 grid_shape, comm):
        self.compiled = compiled
        self.global_inputs = tuple(global_inputs)
        self.global_results = tuple(global_results)
        self.input_axes = input_axes
        self.result_axes = result_axes
        self.grid_shape = tuple(grid_shape)
        self.comm = comm
        self.rank = comm.Get_rank()

    @property
    def name(self) -> str:
        return self.compiled.name

    def local_arguments(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """This rank's shards of the global arguments."""
        return [np.ascontiguousarray(array[shard_slices(array.shape, axes, self.grid_shape,
                                                        self.rank)])
                for array, axes in zip(arrays, self.input_axes)]

    def gather(self, local_results: Sequence[np.ndarray]) -> list[np.ndarray] | None:
        """The global results on rank 0 (None on the other ranks)."""
        gathered = self.comm.gather(list(local_results), root=0)
        if self.rank != 0:
            return None
        results = []
        for index, spec in enumerate(self.global_results):
            array = np.empty(spec.shape, local_results[index].dtype)
            axes = self.result_axes[index] if index < len(self.result_axes) else []
            for rank, parts in enumerate(gathered):
                array[shard_slices(spec.shape, axes, self.grid_shape, rank)] = parts[index]
            results.append(array)
        return results

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray] | None:
        local = self.compiled.check_arguments(self.local_arguments(arrays))
        outputs = self.compiled(*local)
        outputs = list(outputs) if isinstance(outputs, tuple) else (
            [] if outputs is None else [outputs])
        return self.gather(outputs)

    def __call__(self, *arrays):
        results = self.run([np.asarray(a) for a in arrays])
        if results is None:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def _check_local_shapes(func, global_types, local_types, axes, grid_shape) -> None:
    """The partition's local shapes are the shards the recorded shardings
    describe (else gathering would misplace data: a Lamina bug, said so)."""
    for index, (whole, local) in enumerate(zip(global_types, local_types)):
        split = axes[index] if index < len(axes) else []
        slices = shard_slices(whole.shape, split, grid_shape, 0)
        expected = tuple(s.stop - s.start for s in slices)
        if expected != tuple(local.shape):
            raise CompileError.at(func.location,
                                  f"internal error: the partition's {local} does not match the "
                                  f"recorded sharding {split} of {whole}")


def rank_target(spec, ranks: int):
    """The target each of `ranks` processes on this machine compiles for:
    a spec without a thread count (and no LAMINA_NUM_THREADS) gets the
    machine's cores shared between the ranks, so that they do not
    oversubscribe it."""
    if (isinstance(spec, str) and "threads=" not in spec
            and not os.environ.get("LAMINA_NUM_THREADS", "").strip()):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
        threads = max(1, cores // max(1, ranks))
        kind, _, arch = spec.partition(":")
        return f"{kind}:{arch + ',' if arch else ''}threads={threads}"
    return spec


def compile(module, entry: str | None = None, target="cpu", comm=None) -> DistributedFunction:
    """Compiles one rank's partition of a sharded program (an `ir.Module`,
    MLIR text or a path) for the MPI ranks of `comm` (default
    MPI_COMM_WORLD); a target spec without a thread count shares the
    machine's cores between the ranks (`rank_target`). Raises UsageError without MPI and CompileError when
    the grid's size is not the number of ranks or the grid does not
    divide an axis it splits."""
    from lamina.pipeline import Pipeline
    from lamina.targets import get_target
    comm = comm or communicator()
    if isinstance(module, str):
        module = parse(module)
    module = clone_module(module)
    found = grids(module.operation)
    ranks = comm.Get_size()
    if len(found) != 1:
        raise CompileError.at(module.operation.location,
                              f"a distributed program needs exactly one shard.grid, found "
                              f"{len(found)}")
    (grid_name, grid_shape), = found.items()
    if math.prod(grid_shape) != ranks:
        grid_op = next(op.operation for op in module.body.operations
                       if op.operation.name == "shard.grid")
        raise CompileError.at(grid_op.location,
                              f"grid @{grid_name} of shape {list(grid_shape)} has "
                              f"{math.prod(grid_shape)} devices, but {ranks} MPI ranks run "
                              f"the program (mpiexec -n {math.prod(grid_shape)})")
    global_inputs, global_results = signature(find_entry(module, entry))
    cpu = get_target(rank_target(target, ranks))
    pipeline = cpu.pipeline()
    pipeline.run(module, until="partitioned")
    func = find_entry(module, entry)
    input_axes, result_axes = split_axes_of(func, "arg"), split_axes_of(func, "res")
    later = pipeline.stages[pipeline.stages.index("partitioned") + 1:]
    rest = Pipeline([pipeline.stage(name) for name in later], target=cpu)
    compiled = cpu.compile(module, entry=entry, pipeline=rest, distributed=True)
    _check_local_shapes(func, global_inputs, compiled.inputs, input_axes, grid_shape)
    _check_local_shapes(func, global_results, compiled.results, result_axes, grid_shape)
    return DistributedFunction(compiled, global_inputs, global_results, input_axes,
                               result_axes, grid_shape, comm)
