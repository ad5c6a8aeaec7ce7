"""--convert-hw-to-loops: the CPU emulation of hw programs.

Every hw op becomes host loops over memrefs (scf, memref, arith, math,
func), so an hw program runs on the CPU through the CPU target's lower
stages and its results can be compared with NumPy: the GPU level is tested
on a machine without a GPU. Each op is run with its block-collective
meaning, by one host thread, one op after the other; asynchronous copies and
TMA loads are done when they are issued, and commits, waits, barriers,
mbarriers and pipelining annotations have nothing left to do. The hazards
that this order hides (reads of copies still in flight, missing barriers,
deadlocked mbarriers) are what `hw-check-hazards` reports, and the
emulation pipeline runs it first.

Expects verified hw IR: kernels (`func.func` with `hw.kernel`) launched by
`hw.launch` from host functions. Guarantees:

* every hw op is gone; no `hw.` type or attribute is left;
* each kernel becomes a private function taking its arguments and then the
  block index (x, y, z), and each `hw.launch` a loop nest over the grid
  calling it;
* shared and register tiles become `memref.alloca`s at the top of the
  kernel, and no memref keeps a GPU memory space;
* loads past the end of a global memref read zeros and stores past it are
  skipped, as the hw ops define; f16 and bf16 are computed on in f32 (MMA
  accumulates in f32; f32 MMA operands are truncated or rounded to tf32
  first, or split into two tf32 parts whose three products it adds, as
  the op's `precision` says);
* stores with an epilogue call the epilogue function on each element;
* `hw.contract` sums f32 products in the order of k (either unit);
  `hw.mask` sets the scores it hides to -inf;
* runs of elements (`hw.load_elements`, `hw.store_elements`) move each
  element of the tile inside the run and the space, reading operands
  broadcast; block reductions fold their tile's elements in order;
* convolutions: `hw.conv_elements` sums each element's window in loops
  over the taps and the group's channels (f32 products, taps outside the
  input skipped, the bias added last), `hw.im2col` fills its tile with
  the im2col matrix's elements (zero in the padding and past its ends),
  each built as the GPU builds it;
* elementwise register-tile ops (`hw.ElementwiseTileOp`: hw.add, hw.gelu,
  ..., `hw.elementwise` of any nn op) compute each element with the ops
  their scalar expression (`lamina.scalar`) builds, as on the GPU;
* hardware instructions (`lamina.dialects.hw_instructions`) compute each element
  with the arith ops their `emulate` function builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.dialects.hw_instructions import Instruction
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.scalar import cast_float
from lamina.types import type_view

# ---------------------------------------------------------------------------
# Building blocks.


def index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), int(value))


def f32(value: float) -> ir.Value:
    return arith.constant(ir.F32Type.get(), float(value))


def loop_nest(extents: Sequence[int], body: Callable[[list[ir.Value]], None]) -> None:
    """`body(ivs)` inside a nest of loops `0 <= iv < extent`."""
    if not extents:
        body([])
        return
    loop = scf.ForOp(index(0), index(extents[0]), index(1))
    with ir.InsertionPoint(loop.body):
        loop_nest(extents[1:], lambda ivs: body([loop.induction_variable] + ivs))
        scf.YieldOp([])


def to_f32(value: ir.Value) -> ir.Value:
    if isinstance(value.type, (ir.F16Type, ir.BF16Type)):
        return arith.extf(ir.F32Type.get(), value)
    return value


def from_f32(value: ir.Value, element_type: ir.Type) -> ir.Value:
    """A computed element (f32, i1 or an integer) as `element_type`, as
    nn.cast converts: see `convert`."""
    if isinstance(value.type, ir.FloatType) and isinstance(element_type, ir.FloatType):
        return cast_float(value, element_type)
    return convert(value, element_type)


def convert(value: ir.Value, target: ir.Type) -> ir.Value:
    """A scalar as `target` with nn.cast's rules: to i1 is `x != 0`, i1 to
    a number 0 or 1, floats to integers toward zero, integers to floats to
    nearest, integers narrowed by truncation and widened by sign
    extension."""
    if value.type == target:
        return value
    if isinstance(value.type, ir.FloatType):
        if not isinstance(target, ir.IntegerType):
            return cast_float(value, target)
        if ir.IntegerType(target).width == 1:
            return arith.cmpf(arith.CmpFPredicate.UNE, value, constant_of(value.type, 0.0))
        return arith.fptosi(target, value)
    width = ir.IntegerType(value.type).width
    if not isinstance(target, ir.IntegerType):
        return (arith.uitofp if width == 1 else arith.sitofp)(target, value)
    target_width = ir.IntegerType(target).width
    if target_width == 1:
        return arith.cmpi(arith.CmpIPredicate.ne, value, constant_of(value.type, 0))
    if width == 1:
        return arith.extui(target, value)
    return (arith.trunci if target_width < width else arith.extsi)(target, value)


def to_tf32(value: ir.Value, rounded: bool = False) -> ir.Value:
    """An f32 as the tensor cores read it in tf32 (low 13 mantissa bits
    dropped), or `rounded` to the nearest tf32 (`nn.round_tf32`)."""
    i32 = ir.IntegerType.get_signless(32)
    bits = arith.bitcast(i32, value)
    if rounded:
        bits = arith.addi(bits, arith.constant(i32, nn.TF32_HALF))
    masked = arith.andi(bits, arith.constant(i32, nn.TF32_MASK - (1 << 32)))
    return arith.bitcast(ir.F32Type.get(), masked)


def split_tf32(value: ir.Value) -> tuple[ir.Value, ir.Value]:
    """An f32 as 3xTF32 splits it (`hw.split_tf32`): its rounded tf32 part
    and the rounded tf32 residual."""
    big = to_tf32(value, rounded=True)
    return big, to_tf32(arith.subf(value, big), rounded=True)


def mma_products(view, a: ir.Value, b: ir.Value) -> list[tuple[ir.Value, ir.Value]]:
    """The products of an A and a B element (in f32) that `view`, an
    hw.mma, accumulates (f32 operands as its `precision` says), in order."""
    if element_type(view.operand("a")) != ir.F32Type.get():
        return [(a, b)]
    if view.precision == "3xtf32":
        (big_a, small_a), (big_b, small_b) = split_tf32(a), split_tf32(b)
        return [(big_a, small_b), (small_a, big_b), (big_a, big_b)]
    rounded = view.precision == "tf32_rounded"
    return [(to_tf32(a, rounded), to_tf32(b, rounded))]


def element_type(value: ir.Value) -> ir.Type:
    return ir.MemRefType(value.type).element_type


def shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.MemRefType(value.type).shape)


def in_bounds(memref_value: ir.Value, indices: Sequence[ir.Value]) -> ir.Value | None:
    """`0 <= i < dim` for every index (unsigned compare), or None when the
    memref is not in global memory (boxes there are in bounds)."""
    if type_view(memref_value.type).space != "global":
        return None
    condition = None
    for i, size in zip(indices, shape(memref_value)):
        inside = arith.cmpi(arith.CmpIPredicate.ult, i, index(size))
        condition = inside if condition is None else arith.andi(condition, inside)
    return condition


def guarded_load(source: ir.Value, indices: Sequence[ir.Value]) -> ir.Value:
    """`source[indices]`, or zero where the indices are past the end of a
    global memref."""
    condition = in_bounds(source, indices)
    if condition is None:
        return memref.load(source, list(indices))
    clamped = [arith.minui(i, index(size - 1)) for i, size in zip(indices, shape(source))]
    value = memref.load(source, clamped)
    zero = arith.constant(value.type, 0 if isinstance(value.type, ir.IntegerType) else 0.0)
    return arith.select(condition, value, zero)


def guarded_store(value: ir.Value, target: ir.Value, indices: Sequence[ir.Value]) -> None:
    """`target[indices] = value`, skipped past the end of a global memref."""
    condition = in_bounds(target, indices)
    if condition is None:
        memref.store(value, target, list(indices))
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        memref.store(value, target, list(indices))
        scf.YieldOp([])


def placed(place: hw.Placement, indices: Sequence[ir.Value],
           box_ivs: Sequence[ir.Value]) -> list[ir.Value]:
    """The indices of an element of the box in an operand."""
    lead = place.memref.rank - len(place.box)
    if place.role == "tile":
        return list(indices[:lead]) + list(box_ivs)
    return list(indices[:lead]) + [arith.addi(o, iv) for o, iv in zip(indices[lead:], box_ivs)]


# ---------------------------------------------------------------------------
# Op lowerings: each builds the op's replacement before it.

LOWERINGS: dict[str, Callable] = {}


def lowers(*op_classes):
    def register(function):
        for op_class in op_classes:
            LOWERINGS[op_class.op_name()] = function
        return function
    return register


def lower_transfer(view, src, dst, indices) -> None:
    t = hw.transfer(type_view(src.type), type_view(dst.type))
    src_indices, dst_indices = t.split(indices)

    def body(ivs):
        value = guarded_load(src, placed(t.src, src_indices, ivs))
        guarded_store(value, dst, placed(t.dst, dst_indices, ivs))
    loop_nest(t.box, body)


@lowers(hw.CopyOp, hw.AsyncCopyOp, hw.TmaLoadOp)
def _copy(view):
    lower_transfer(view, view.operand("src"), view.operand("dst"), view.operand("indices"))


@lowers(hw.MmaOp)
def _mma(view):
    a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
    indices = view.operand("indices")
    lead_a = len(shape(a)) - 2
    stage_a, stage_b = list(indices[:lead_a]), list(indices[lead_a:])
    m, n = shape(c)
    k = view.matrix_shape(type_view(a.type), "a")[1]

    def body(ivs):
        i, j = ivs
        loop = scf.ForOp(index(0), index(k), index(1), [memref.load(c, [i, j])])
        with ir.InsertionPoint(loop.body):
            kk = loop.induction_variable
            x = to_f32(memref.load(a, stage_a + ([kk, i] if view.transpose_a else [i, kk])))
            y = to_f32(memref.load(b, stage_b + ([j, kk] if view.transpose_b else [kk, j])))
            total = loop.inner_iter_args[0]
            for lhs, rhs in mma_products(view, x, y):
                total = arith.addf(total, arith.mulf(lhs, rhs))
            scf.YieldOp([total])
        memref.store(loop.results[0], c, [i, j])
    loop_nest((m, n), body)


@lowers(hw.ContractOp)
def _contract(view):
    a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
    indices = view.operand("indices")
    lead_a = len(shape(a)) - 2
    stage_a, stage_b = list(indices[:lead_a]), list(indices[lead_a:])
    m, n, k = view.problem_shape(type_view(a.type), type_view(b.type))

    def body(ivs):
        i, j = ivs
        loop = scf.ForOp(index(0), index(k), index(1), [memref.load(c, [i, j])])
        with ir.InsertionPoint(loop.body):
            kk = loop.induction_variable
            rhs = stage_b + ([j, kk] if view.transpose_b else [kk, j])
            product = arith.mulf(to_f32(memref.load(a, stage_a + [i, kk])),
                                 to_f32(memref.load(b, rhs)))
            scf.YieldOp([arith.addf(loop.inner_iter_args[0], product)])
        memref.store(loop.results[0], c, [i, j])
    loop_nest((m, n), body)


def hidden(view, row: ir.Value, col: ir.Value) -> ir.Value:
    """Whether the `hw.mask` hides the score of query `row`, key `col`."""
    condition = arith.cmpi(arith.CmpIPredicate.uge, col, index(view.keys))
    if view.causal:
        condition = arith.ori(condition, arith.cmpi(arith.CmpIPredicate.ugt, col, row))
    return condition


@lowers(hw.MaskOp)
def _mask(view):
    x = view.operand("x")
    row, col = view.operand("row"), view.operand("col")
    minus_infinity = f32(float("-inf"))

    def body(ivs):
        i, j = ivs
        value = memref.load(x, [i, j])
        hide = hidden(view, arith.addi(row, i), arith.addi(col, j))
        memref.store(arith.select(hide, minus_infinity, value), x, [i, j])
    loop_nest(shape(x), body)


@lowers(hw.FillOp)
def _fill(view):
    out = view.operand("out")
    value = arith.constant(element_type(out), float(view.value))
    loop_nest(shape(out), lambda ivs: memref.store(value, out, ivs))


def broadcast_indices(operand_shape: Sequence[int], ivs: Sequence[ir.Value]) -> list[ir.Value]:
    """The indices of an operand broadcast (NumPy rules) to the loops `ivs`."""
    ivs = list(ivs)[len(ivs) - len(operand_shape):]
    return [index(0) if size == 1 else iv for size, iv in zip(operand_shape, ivs)]


def lower_elementwise(view) -> None:
    """An elementwise register-tile op (`hw.ElementwiseTileOp`), element by
    element through its scalar expression (`view.element`), inputs
    broadcast to `out`."""
    out = view.operand("out")
    inputs = view.inputs()

    def body(ivs):
        values = [to_f32(memref.load(x, broadcast_indices(shape(x), ivs))) for x in inputs]
        memref.store(from_f32(view.element(values), element_type(out)), out, ivs)
    loop_nest(shape(out), body)


REDUCTIONS = {
    "hw.reduce_sum": (0.0, arith.addf),
    "hw.reduce_max": (float("-inf"), arith.maximumf),
}


@lowers(*(lookup_op(name) for name in REDUCTIONS))
def _reduce(view):
    x, out = view.operand("x"), view.operand("out")
    initial, combine = REDUCTIONS[view.op_name()]
    rows, cols = shape(x)

    def body(ivs):
        (i,) = ivs
        loop = scf.ForOp(index(0), index(cols), index(1), [f32(initial)])
        with ir.InsertionPoint(loop.body):
            value = to_f32(memref.load(x, [i, loop.induction_variable]))
            scf.YieldOp([combine(loop.inner_iter_args[0], value)])
        memref.store(from_f32(loop.results[0], element_type(out)), out, [i, index(0)])
    loop_nest((rows,), body)


def space_coordinates(view, position: ir.Value) -> list[ir.Value]:
    """The coordinates of a flat position of an `hw.ElementsOp`'s walk of
    its space, as index ops."""
    return hw.walked_coordinates(position, view.shape, view.walk(), (
        lambda a, b: arith.divui(a, index(b)), lambda a, b: arith.remui(a, index(b))))


def run_position(view, tile_length: int, i: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The flat position of tile element `i` of an `hw.ElementsOp` and
    whether it is moved (inside the run and the space)."""
    position = arith.addi(view.operand("offset"), i)
    inside = arith.cmpi(arith.CmpIPredicate.ult, position, index(math.prod(view.shape)))
    if view.run_length(tile_length) < tile_length:
        inside = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.ult, i,
                                               index(view.run_length(tile_length))))
    return position, inside


@lowers(hw.LoadElementsOp)
def _load_elements(view):
    src, dst = view.operand("src"), view.operand("dst")
    (length,) = shape(dst)

    def body(ivs):
        (i,) = ivs
        position, inside = run_position(view, length, i)
        zero = constant_of(element_type(dst), 0.0)
        branch = scf.IfOp(inside, [element_type(dst)], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            coordinates = hw.broadcast_coordinates(space_coordinates(view, position),
                                                   shape(src))
            scf.YieldOp([memref.load(src, [index(0) if isinstance(c, int) else c
                                           for c in coordinates])])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([zero])
        memref.store(branch.results[0], dst, [i])
    loop_nest((length,), body)


@lowers(hw.StoreElementsOp)
def _store_elements(view):
    src, dst = view.operand("src"), view.operand("dst")
    (length,) = shape(src)

    def body(ivs):
        (i,) = ivs
        position, inside = run_position(view, length, i)
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            value = memref.load(src, [i])
            coordinates = space_coordinates(view, position)
            origin = list(view.operand("origin"))
            if origin:
                guarded_store(value, dst, [arith.addi(c, o) for c, o in zip(coordinates, origin)])
            else:
                memref.store(value, dst, coordinates)
            scf.YieldOp([])
    loop_nest((length,), body)


# -- data movement: elements through an index map ---------------------------
# Shared with the GPU lowering: each builds the element at one flat position
# of the space and hands it to `write`.


def constant_of(element: ir.Type, value: float) -> ir.Value:
    """`value` as a constant of `element` (a boolean is `value != 0`)."""
    if isinstance(element, ir.IntegerType):
        width = ir.IntegerType(element).width
        return arith.constant(element, int(bool(value)) if width == 1 else int(value))
    return arith.constant(element, float(value))


def _add(a: ir.Value, b: int) -> ir.Value:
    return a if b == 0 else arith.addi(a, index(b))


def _mul(a: ir.Value, b: int) -> ir.Value:
    return a if b == 1 else arith.muli(a, index(b))


def _clamp(value: ir.Value, size: int) -> ir.Value:
    return arith.minsi(arith.maxsi(value, index(0)), index(size - 1))


def gather_element(view, position: ir.Value, write: Callable[[ir.Value], None]) -> None:
    """`hw.gather_elements` at flat position `position` of its space."""
    src, indices = view.operand("src"), view.operand("indices")
    coordinates = space_coordinates(view, position)
    read_index = None
    if indices is not None:
        def read_index(at):
            found = memref.load(indices, list(at[:len(shape(indices))]))
            return arith.index_cast(ir.IndexType.get(), found)
    found = [index(c) if isinstance(c, int) else c for c in view.source(
        coordinates, shape(src), read_index, (_add, _mul, _clamp))]
    inside = None
    for d, (c, size) in enumerate(zip(found, shape(src))):
        if indices is not None and d == view.axis or view.inside_dim(d, size):
            continue
        ok = arith.cmpi(arith.CmpIPredicate.ult, c, index(size))
        inside = ok if inside is None else arith.andi(inside, ok)
    if inside is None:
        write(memref.load(src, found))
        return
    if view.value is None:
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            write(memref.load(src, found))
            scf.YieldOp([])
        return
    element = element_type(src)
    branch = scf.IfOp(inside, [element], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([memref.load(src, found)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([constant_of(element, view.value)])
    write(branch.results[0])


def index_cast_to(value: ir.Value, element: ir.Type) -> ir.Value:
    """An index as an element of `element` (an integer or a float)."""
    if isinstance(element, ir.IntegerType):
        return arith.index_cast(element, value)
    return arith.sitofp(element, arith.index_cast(ir.IntegerType.get_signless(64), value))


def index_element(view, position: ir.Value, write: Callable[[ir.Value], None],
                  element: ir.Type) -> None:
    """`hw.index_elements` at flat position `position` of its space."""
    write(index_cast_to(space_coordinates(view, position)[view.axis], element))


def fold_axis_element(view, position: ir.Value, write: Callable[[ir.Value], None],
                      element: ir.Type) -> None:
    """`hw.fold_axis` at flat position `position` of its space: a loop
    along the axis."""
    src = view.operand("src")
    rank, size = len(shape(src)), shape(src)[view.axis]
    coordinates = space_coordinates(view, position)
    source = element_type(src)
    integer = isinstance(source, ir.IntegerType)

    def load(k):
        value = memref.load(src, view.along(coordinates, rank, k))
        return value if integer else to_f32(value)
    if view.kind == "prefix_sum":
        upper = arith.addi(coordinates[view.axis], index(1))
        start = arith.constant(source, 0) if integer else f32(0.0)
        loop = scf.ForOp(index(0), upper, index(1), [start])
        with ir.InsertionPoint(loop.body):
            add = arith.addi if integer else arith.addf
            scf.YieldOp([add(loop.inner_iter_args[0], load(loop.induction_variable))])
        write(loop.results[0] if integer else from_f32(loop.results[0], element))
        return
    loop = scf.ForOp(index(1), index(size), index(1), [load(index(0)), index(0)])
    with ir.InsertionPoint(loop.body):
        best, at = loop.inner_iter_args
        value = load(loop.induction_variable)
        if integer:
            take = arith.cmpi(arith.CmpIPredicate.sgt, value, best)
        else:
            # The first NaN wins, and nothing after it.
            take = arith.ori(arith.cmpf(arith.CmpFPredicate.OGT, value, best), arith.andi(
                arith.cmpf(arith.CmpFPredicate.UNO, value, value),
                arith.cmpf(arith.CmpFPredicate.ORD, best, best)))
        scf.YieldOp([arith.select(take, value, best),
                     arith.select(take, loop.induction_variable, at)])
    write(arith.index_cast(element, loop.results[1]))


def conv_element(view, position: ir.Value, write: Callable[[ir.Value], None]) -> None:
    """`hw.conv_elements` at flat position `position` of its space: loops
    over the window's taps (kh, kw) and, in each tap inside the input, over
    its group's input channels, summing f32 products."""
    x, weight, bias = view.operand("x"), view.operand("weight"), view.operand("bias")
    n, o, oh, ow = hw._to_nchw(space_coordinates(view, position), view.layout)
    _, channels, height, width = hw._to_nchw(shape(x), view.layout)
    out, per_group, kh_size, kw_size = shape(weight)
    first = _mul(arith.divui(o, index(out // view.groups)), per_group) if view.groups > 1 \
        else index(0)

    def taps(kh, kw, total):
        ih, iw = view.input_position(oh, ow, kh, kw, (_add_any, _mul))
        inside = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, ih, index(height)),
                            arith.cmpi(arith.CmpIPredicate.ult, iw, index(width)))
        branch = scf.IfOp(inside, [total.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            loop = scf.ForOp(index(0), index(per_group), index(1), [total])
            with ir.InsertionPoint(loop.body):
                c = loop.induction_variable
                at = hw._from_nchw((n, arith.addi(first, c), ih, iw), view.layout)
                product = arith.mulf(to_f32(memref.load(x, list(at))),
                                     to_f32(memref.load(weight, [o, c, kh, kw])))
                scf.YieldOp([arith.addf(loop.inner_iter_args[0], product)])
            scf.YieldOp([loop.results[0]])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([total])
        return branch.results[0]

    rows = scf.ForOp(index(0), index(kh_size), index(1), [f32(0.0)])
    with ir.InsertionPoint(rows.body):
        cols = scf.ForOp(index(0), index(kw_size), index(1), [rows.inner_iter_args[0]])
        with ir.InsertionPoint(cols.body):
            scf.YieldOp([taps(rows.induction_variable, cols.induction_variable,
                              cols.inner_iter_args[0])])
        scf.YieldOp([cols.results[0]])
    total = rows.results[0]
    if bias is not None:
        total = arith.addf(total, to_f32(memref.load(bias, [o])))
    write(total)


def im2col_element(view, x: ir.Value, m: ir.Value, k: ir.Value) -> ir.Value:
    """Element (m, k) of the im2col matrix of `hw.im2col`: the input's
    element at its pixel's tap, zero in the padding and past the matrix."""
    rows, cols = view.matrix_shape(shape(x))
    images, channels, height, width = hw._to_nchw(shape(x), view.layout)
    kh_size, kw_size = view.window
    n, oh, ow = hw.walked_coordinates(m, view.space, range(3), (
        lambda a, b: arith.divui(a, index(b)), lambda a, b: arith.remui(a, index(b))))
    c = arith.divui(k, index(kh_size * kw_size))
    kh = arith.remui(arith.divui(k, index(kw_size)), index(kh_size))
    kw = arith.remui(k, index(kw_size))
    ih, iw = view.input_position(oh, ow, kh, kw, (_add_any, _mul))
    inside = None
    for value, size in ((m, rows), (k, cols), (ih, height), (iw, width)):
        ok = arith.cmpi(arith.CmpIPredicate.ult, value, index(size))
        inside = ok if inside is None else arith.andi(inside, ok)
    at = [arith.minui(value, index(size - 1)) for value, size in
          zip((n, c, ih, iw), (images, channels, height, width))]
    value = memref.load(x, list(hw._from_nchw(at, view.layout)))
    return arith.select(inside, value, constant_of(value.type, 0.0))


def _add_any(a, b):
    """`a + b` of index values, either an integer (folded when 0)."""
    if isinstance(a, int):
        a, b = b, a
    if isinstance(b, int):
        return _add(a, b) if b >= 0 else arith.subi(a, index(-b))
    return arith.addi(a, b)


def _run_of(view, tile: ir.Value, element_of) -> None:
    """Each element of a movement op's run, written into its tile."""
    (length,) = shape(tile)

    def body(ivs):
        (i,) = ivs
        position, inside = run_position(view, length, i)
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            element_of(position, lambda value: memref.store(value, tile, [i]))
            scf.YieldOp([])
    loop_nest((length,), body)


@lowers(hw.GatherElementsOp)
def _gather_elements(view):
    _run_of(view, view.operand("dst"), lambda p, write: gather_element(view, p, write))


@lowers(hw.IndexElementsOp)
def _index_elements(view):
    dst = view.operand("dst")
    _run_of(view, dst, lambda p, write: index_element(view, p, write, element_type(dst)))


@lowers(hw.FoldAxisOp)
def _fold_axis(view):
    dst = view.operand("dst")
    _run_of(view, dst, lambda p, write: fold_axis_element(view, p, write, element_type(dst)))


@lowers(hw.ConvElementsOp)
def _conv_elements(view):
    _run_of(view, view.operand("dst"), lambda p, write: conv_element(view, p, write))


@lowers(hw.Im2colOp)
def _im2col(view):
    x, dst = view.operand("x"), view.operand("dst")
    row, col = view.operand("row"), view.operand("col")

    def body(ivs):
        i, j = ivs
        m, k = (j, i) if view.transposed else (i, j)
        memref.store(im2col_element(view, x, arith.addi(row, m), arith.addi(col, k)), dst,
                     [i, j])
    loop_nest(shape(dst), body)


COMBINES = {"add": arith.addf, "mul": arith.mulf, "maximum": arith.maximumf,
            "minimum": arith.minimumf}

# The steps of integer folds (maximum and minimum signed, as nn's).
INTEGER_COMBINES = {"add": arith.addi, "mul": arith.muli, "maximum": arith.maxsi,
                    "minimum": arith.minsi}


def fold_start(combine: str, element: ir.Type) -> tuple[ir.Value, Callable]:
    """The identity and the step of a block reduction's fold of `element`
    values: in f32 for floats, in the integer type itself for integers."""
    if isinstance(element, ir.IntegerType):
        identity = hw.reduction_identity(combine, f"i{element.width}")
        return arith.constant(element, identity), INTEGER_COMBINES[combine]
    return f32(hw.REDUCTION_COMBINES[combine]), COMBINES[combine]


@lowers(hw.BlockReduceOp)
def _block_reduce(view):
    x, out = view.operand("x"), view.operand("out")
    (length,) = shape(x)
    count = view.count
    identity, combine = fold_start(view.combine, element_type(x))
    loop = scf.ForOp(index(0), index(count), index(1), [identity])
    with ir.InsertionPoint(loop.body):
        value = to_f32(memref.load(x, [loop.induction_variable]))
        scf.YieldOp([combine(loop.inner_iter_args[0], value)])
    memref.store(from_f32(loop.results[0], element_type(out)), out,
                 [index(0)] * len(shape(out)))


def extra_position(extra: ir.Value, dst: ir.Value, position: Sequence[ir.Value]
                   ) -> list[ir.Value]:
    """Where an `hw.store`'s extra is read for the element of `dst` at
    `position`: its column (a vector), or the position with the dims the
    extra broadcasts over (1 where `dst`'s are not) at 0."""
    if len(shape(extra)) == 1 and len(shape(dst)) > 1:
        return list(position[-1:])
    return [index(0) if e == 1 and d != 1 else p
            for e, d, p in zip(shape(extra), shape(dst), position)]


@lowers(hw.StoreOp)
def _store(view):
    src, dst = view.operand("src"), view.operand("dst")
    extras, indices = view.operand("extras"), view.operand("indices")
    lead, (row, col) = list(indices[:-2]), indices[-2:]
    target_type = element_type(dst)

    def body(ivs):
        i, j = ivs
        position = lead + [arith.addi(row, i), arith.addi(col, j)]
        condition = in_bounds(dst, position)
        branch = scf.IfOp(condition)
        with ir.InsertionPoint(branch.then_block):
            value = to_f32(memref.load(src, [i, j]))
            if view.epilogue is None:
                value = from_f32(value, target_type)
            else:
                arguments = [value] + [memref.load(extra, extra_position(extra, dst, position))
                                       for extra in extras]
                value = func.CallOp([target_type], ir.FlatSymbolRefAttr.get(view.epilogue),
                                    arguments).result
            memref.store(value, dst, position)
            scf.YieldOp([])
    loop_nest(shape(src), body)


def lower_instruction(view) -> None:
    """A hardware instruction, element by element, through its `emulate`."""
    *inputs, out = view.operation.operands

    def body(ivs):
        result = view.emulate_element([memref.load(v, ivs) for v in inputs], element_type(out))
        memref.store(result, out, ivs)
    loop_nest(shape(out), body)


@lowers(hw.AllocOp)
def _alloc(view):
    # The memory space stays until the kernel is lowered (the ops after
    # this one are lowered by it); `strip_memory_spaces` removes it.
    alloca = memref.AllocaOp(view.operation.results[0].type, [], []).result
    view.operation.results[0].replace_all_uses_with(alloca)


# Ops the sequential emulation has nothing to do for.
for _name in ("hw.commit", "hw.wait", "hw.barrier", "hw.pipeline", "hw.mbarrier_init",
              "hw.mbarrier_arrive", "hw.mbarrier_wait"):
    LOWERINGS[_name] = lambda view: None


# ---------------------------------------------------------------------------
# Kernels and launches.


def _kernels(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and hw.is_kernel(op.operation)]


def _emulated_kernel(kernel: ir.Operation) -> None:
    """Adds the block index arguments and lowers the kernel's hw ops."""
    entry = kernel.regions[0].blocks[0]
    location = kernel.location
    block_ids = [entry.add_argument(ir.IndexType.get(), location) for _ in range(3)]
    ftype = hw.function_type(kernel)
    kernel.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        list(ftype.inputs) + [ir.IndexType.get()] * 3, list(ftype.results)))
    del kernel.attributes[hw.KERNEL_ATTRIBUTE]
    if hw.MIN_BLOCKS_ATTRIBUTE in kernel.attributes:
        del kernel.attributes[hw.MIN_BLOCKS_ATTRIBUTE]
    kernel.attributes["sym_visibility"] = ir.StringAttr.get("private")

    ops: list[ir.Operation] = []

    def collect(op):
        if op.name.startswith("hw."):
            ops.append(op.operation)
        return ir.WalkResult.ADVANCE
    kernel.walk(collect, ir.WalkOrder.PRE_ORDER)
    for op in ops:
        if op.name == "hw.block_id":
            op.results[0].replace_all_uses_with(block_ids[hw.BlockIdOp.from_operation(op).dim])
            continue
        lowering = LOWERINGS.get(op.name)
        op_class = lookup_op(op.name)
        if isinstance(op_class, type) and issubclass(op_class, Instruction):
            lowering = lower_instruction
        elif isinstance(op_class, type) and issubclass(op_class, hw.ElementwiseTileOp):
            lowering = lower_elementwise
        if lowering is None:
            raise PassFailure(f"'{op.name}' has no CPU emulation", op.location)
        with op.location, ir.InsertionPoint(op):
            lowering(lookup_op(op.name).from_operation(op))
    for op in reversed(ops):
        if any(len(list(result.uses)) for result in op.results):
            raise PassFailure(f"the result of '{op.name}' is used by an op the emulation "
                              "does not know", op.location)
        op.erase()


def _emulated_launch(launch: ir.Operation) -> None:
    view = hw.LaunchOp.from_operation(launch)
    with launch.location, ir.InsertionPoint(launch):
        def body(ivs):
            bz, by, bx = ivs
            func.CallOp([], ir.FlatSymbolRefAttr.get(view.kernel),
                        list(launch.operands) + [bx, by, bz])
        loop_nest(tuple(reversed(view.grid3)), body)
    launch.erase()


def strip_memory_spaces(root: ir.Operation) -> None:
    """Gives every memref value under `root` the global (no) memory space."""
    def plain(value: ir.Value) -> None:
        if isinstance(value.type, ir.MemRefType) and \
                ir.MemRefType(value.type).memory_space is not None:
            value.set_type(type_view(value.type).with_space("global").to_mlir())

    def visit(op):
        for result in op.results:
            plain(result)
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    plain(argument)
        return ir.WalkResult.ADVANCE
    root.walk(visit, ir.WalkOrder.PRE_ORDER)


@register_pass
@dataclass
class ConvertHWToLoops(Pass):
    """Lowers every hw op to host loops over memrefs: the CPU emulation of hw programs."""

    argument = "convert-hw-to-loops"

    def run(self, op: ir.Operation) -> None:
        with op.context:
            for kernel in _kernels(op):
                _emulated_kernel(kernel)
                strip_memory_spaces(kernel)
            launches: list[ir.Operation] = []

            def collect(inner):
                if inner.name == "hw.launch":
                    launches.append(inner.operation)
                return ir.WalkResult.ADVANCE
            op.walk(collect, ir.WalkOrder.PRE_ORDER)
            for launch in launches:
                _emulated_launch(launch)
