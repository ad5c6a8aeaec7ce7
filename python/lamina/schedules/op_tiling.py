"""The vector code of one op inside its group's loops, shared by the
schedule kinds: loop nests tile every op this way, contractions and
convolutions their fills, flash attention's loop body its row ops.

One vector step runs along the op's vector dim (its contiguous dim, or
for a transpose the output's innermost), `unroll` vectors at a time, one
element along every other loop; a reduction along the vector dim keeps a
tile of partial vector accumulators, merged after the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir
from mlir.dialects.transform import loop, structured
from mlir.dialects.transform import vector as vector_transform
from mlir.dialects import transform

from lamina.schedules.analysis import LinalgOp
from lamina.schedules.transforms import (any_op, canonicalization, match_tag, patterns, tile,
                                         vectorize)
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class OpTiling:
    """The vector code of one op inside its group's loops: `vector_tile`
    (scf.for tile sizes, one per loop; the tile is vectorised) and, for a
    reduction along the vector dim, `reduction_tile` (partial accumulators
    of that many elements, merged after the loop)."""

    tag: str
    vector_tile: tuple[int, ...]
    reduction_tile: tuple[int, ...] = ()
    accumulate: bool = False
    """A contraction whose innermost tile loop runs over its reduction:
    vectorised into FMAs, the accumulators kept in registers across it."""
    scalable: tuple[bool, ...] = ()
    """Per loop, whether its tile is a multiple of the scalable vector
    length (SVE: `vector_tile` times vscale); such a tile is vectorised
    with masks (the last one is partial), to `vector_sizes`."""
    vector_sizes: tuple[int, ...] = ()

    def describe(self) -> str:
        tile = [f"[{t}]" if scalable else str(t)
                for t, scalable in zip(self.vector_tile, self.scalable or [False] * 99)]
        return (f"  {self.tag}: vector [{', '.join(tile)}]"
                + (f" reduction {list(self.reduction_tile)}" if self.reduction_tile else ""))

    def render(self, root: ir.Value) -> None:
        """Emits the tiling and vectorisation of the op tagged `tag`."""
        target = match_tag(root, self.tag)
        if any(self.scalable):
            tiled, loops = tile(target, self.vector_tile, self.scalable)
            vectorize(tiled, self.vector_sizes, self.scalable)
            # Masked transfers as transfers with a mask operand: the
            # `vector.mask` regions would stop bufferization's deallocation.
            patterns(loops[-1], vector_transform.ApplyLowerMaskedTransfersPatternsOp,
                     canonicalization)
            return
        tiled, loops = tile(target, self.vector_tile)
        if self.accumulate:
            vectorize(tiled)
            patterns(loops[0], vector_transform.ApplyVectorReductionToContractPatternsOp,
                     vector_transform.ApplyTransferPermutationPatternsOp, canonicalization)
            # The accumulators' vector leaves the loop once its indices
            # (constants made inside it) do.
            transform.ApplyLoopInvariantCodeMotionOp(loops[-1])
            loop.HoistLoopInvariantSubsetsOp(loops[-1])
        elif self.reduction_tile:
            split = structured.TileReductionUsingForOp(
                [any_op()], any_op(), any_op(), any_op(), tiled,
                tile_sizes=list(self.reduction_tile))
            for handle in list(split.fill_op) + [split.split_op, split.combining_op]:
                vectorize(handle)
            # The partial accumulators stay in registers across the loop (the
            # canonicalization inside it proves the transfers in bounds, CSE
            # and loop-invariant code motion make their indices the same values,
            # defined outside the loop).
            patterns(split.for_op, canonicalization, cse=True)
            transform.ApplyLoopInvariantCodeMotionOp(split.for_op)
            loop.HoistLoopInvariantSubsetsOp(split.for_op)
        else:
            vectorize(tiled)


def largest_divisor(extent: int, limit: int, multiple_of: int = 1) -> int:
    """The largest multiple of `multiple_of` dividing `extent` and at most
    `limit` (at least `multiple_of`)."""
    best = multiple_of
    for size in range(multiple_of, min(limit, extent) + 1, multiple_of):
        if extent % size == 0:
            best = size
    return best


def vector_length(extent: int, model: CPUModel) -> int:
    """Elements per vector step along a dim of `extent`: the whole extent
    when it is more than one vector, at most `unroll`, and a multiple of 4;
    else `unroll` vectors when they divide it, else the largest power of
    two from there down to 4 that does; 0 when none does."""
    size = model.lanes * model.unroll
    if extent <= size and extent % 4 == 0 and extent > model.lanes:
        # One step over the whole extent: LLVM splits the vector into
        # legal ones (28 = 16 + 8 + 4), fewer than the power-of-two
        # steps that divide it (seven of 4).
        return extent
    while size >= 4:
        if extent % size == 0:
            return size
        size //= 2
    return 0


def vector_dim(linalg: LinalgOp) -> int | None:
    """The dim vector code runs along: `vector_dim()`, else the innermost
    dim of the output (a transpose, whose reads are then strided)."""
    dim = linalg.vector_dim()
    if dim is None:
        output = [d for d in linalg.output_map if d is not None]
        dim = output[-1] if output else None
    return dim


def op_tiling(linalg: LinalgOp, model: CPUModel,
              forall: tuple[int, ...] = (), scalable: bool = False) -> OpTiling | None:
    """The vector tile of one op: one vector step along its vector dim,
    one element along every other loop. `forall` gives the tile sizes of
    the op's loops in the thread loop around it (0: whole): inside it
    those loops have the tile's extent (a copy of the op left outside the
    loop, for uses outside the group, is tiled the same way). With
    `scalable`, on a model of scalable vectors, an op that allows it gets
    scalable vector code (a loop nest's: the other kinds' loops around
    their ops have fixed tiles)."""
    forall = forall or (0,) * linalg.rank
    extents = tuple(t or e for t, e in zip(forall, linalg.extents))
    tiled = replace(linalg, extents=extents)
    dim = vector_dim(tiled)
    if dim is None:
        return None
    if scalable and model.scalable_vectors and _scalable(tiled, dim):
        return _scalable_tiling(linalg, model, forall, extents, dim)
    # Strided reads (a transpose's) are gathered element by element: one
    # vector at a time keeps the unrolled code small.
    length = vector_length(extents[dim], model if tiled.vector_dim() is not None
                           else replace(model, unroll=1))
    if not length:
        return None
    tile_sizes = [t or (0 if extent == 1 else 1) for t, extent in zip(forall, linalg.extents)]
    if linalg.reduction[dim]:
        tile_sizes[dim] = 0
        if length == extents[dim]:
            return OpTiling(linalg.tag, tuple(tile_sizes))
        if _reads_index(linalg.op, dim):
            # Upstream's partial-reduction tiling leaves `linalg.index` of
            # the split loop unshifted: plain tiles of the reduction keep
            # every index right (argmax, cumsum).
            tile_sizes[dim] = length
            return OpTiling(linalg.tag, tuple(tile_sizes))
        reduction = [0] * linalg.rank
        reduction[dim] = length
        return OpTiling(linalg.tag, tuple(tile_sizes), tuple(reduction))
    tile_sizes[dim] = length
    return OpTiling(linalg.tag, tuple(tile_sizes))


def _scalable(linalg: LinalgOp, dim: int) -> bool:
    """Whether an op's vector code can be scalable: its vector dim is
    contiguous and parallel, every operand reads along it (upstream's
    transfer lowering cannot broadcast a value to a scalable vector), and
    every op of its body has scalable vector code (`_scalable_op`)."""
    if linalg.vector_dim() != dim or linalg.reduction[dim]:
        return False
    if any(dims and dim not in dims for dims in linalg.maps):
        return False
    body = linalg.op.regions[0].blocks[0].operations if linalg.op.regions else []
    return all(_scalable_op(o) for o in body)


# Math ops LLVM's backends lower on scalable vectors themselves, and those
# cpu-approximate-math turns into polynomials on f32 vectors. Others
# (cos, pow, ...) become libm calls per element, which LLVM can make of
# fixed vectors only; so does `arith.remf`.
_NATIVE_MATH = {"math.sqrt", "math.fma", "math.absf", "math.floor", "math.ceil",
                "math.roundeven", "math.copysign", "math.absi"}
_APPROXIMATED_MATH = {"math.exp", "math.log", "math.tanh", "math.erf", "math.rsqrt"}


def _scalable_op(op: ir.Operation) -> bool:
    """Whether an op of a linalg body vectorises to code for scalable
    vectors: no gather (`tensor.extract`, which upstream's masked
    vectorisation does not turn into scalable loads), no math op but those
    LLVM lowers on them or Lamina approximates (on f32)."""
    name = op.name
    if name == "tensor.extract" or name == "arith.remf":
        return False
    if not name.startswith("math.") or name in _NATIVE_MATH:
        return True
    return name in _APPROXIMATED_MATH and all(isinstance(r.type, ir.F32Type) for r in op.results)


def _scalable_tiling(linalg: LinalgOp, model: CPUModel, forall: tuple[int, ...],
                     extents: tuple[int, ...], dim: int) -> OpTiling:
    """Scalable vector code along `dim`: `unroll` vectors of the minimum
    width times vscale per step where the extent has that many, else one;
    the last step masked."""
    step = model.lanes * (model.unroll if extents[dim] >= model.lanes * model.unroll else 1)
    tile_sizes = [t or (0 if extent == 1 else 1) for t, extent in zip(forall, linalg.extents)]
    tile_sizes[dim] = step
    sizes = tuple(t or e for t, e in zip(tile_sizes, extents))
    scalable = tuple(d == dim for d in range(linalg.rank))
    return OpTiling(linalg.tag, tuple(tile_sizes), scalable=scalable, vector_sizes=sizes)


def _reads_index(op: ir.Operation, dim: int) -> bool:
    """Whether the body of a linalg op reads the index of loop `dim`."""
    if not op.regions or not op.regions[0].blocks:
        return False
    return any(o.name == "linalg.index" and ir.IntegerAttr(o.attributes["dim"]).value == dim
               for o in op.regions[0].blocks[0].operations)


def fill_tilings(fills: list[LinalgOp], model: CPUModel) -> tuple[OpTiling, ...]:
    """The vector tiles of the fills that initialise a contraction or a
    convolution (those that have one)."""
    return tuple(t for t in (op_tiling(f, model) for f in fills) if t)
