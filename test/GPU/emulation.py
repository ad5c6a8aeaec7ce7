# RUN: %PYTHON %s | FileCheck %s
#
# The CPU emulation of every hw op (convert-hw-to-loops, run by the
# emulated CUDA target) computes what the op's NumPy reference says: each
# kernel here runs emulated and, op by op, through the references, and the
# global memrefs it writes are compared.

import numpy as np
from mlir import ir

import lamina
from lamina.dialects.opdef import lookup_op
from lamina.targets import get_target
from lamina.types import numpy_dtype, type_view

EMULATED = get_target("cuda:sm_90a").emulation()
RNG = np.random.default_rng(7)

SPACES = {"smem": "#gpu.address_space<workgroup>", "reg": "#gpu.address_space<private>"}


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def program(signature: list[str], body: str, epilogue: str = "") -> str:
    """A module launching a kernel with the given argument types once, on
    one block of 128 threads. `!smem<...>` and `!reg<...>` in the body are
    memrefs in shared memory and registers."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(signature))
    names = ", ".join(f"%arg{i}" for i in range(len(signature)))
    types = ", ".join(signature)
    for short, space in SPACES.items():
        body = body.replace(f"!{short}<", "memref<").replace(f"{short}>", f"{space}>")
    return f"""
func.func @main({args}) {{
  "hw.launch"({names}) {{kernel = @kernel, grid = array<i64: 1>, block = array<i64: 128>}} : ({types}) -> ()
  return
}}
func.func @kernel({args}) attributes {{hw.kernel}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
{body}
  return
}}
{epilogue}
"""


def reference_run(module: ir.Module, arrays: list[np.ndarray]) -> None:
    """Runs the kernel's straight-line body through the ops' NumPy
    references, in place on `arrays`."""
    kernel = next(op.operation for op in module.body.operations
                  if "sym_name" in op.operation.attributes
                  and ir.StringAttr(op.operation.attributes["sym_name"]).value == "kernel")
    block = kernel.regions[0].blocks[0]
    values = dict(zip(block.arguments, arrays))
    for op in block.operations:
        op = op.operation
        if op.name == "arith.constant":
            values[op.results[0]] = ir.IntegerAttr(op.attributes["value"]).value
        elif op.name == "hw.alloc":
            tile = type_view(op.results[0].type)
            values[op.results[0]] = np.full(tile.shape, np.nan, numpy_dtype(tile.dtype))
        elif op.name.startswith("hw."):
            view = lookup_op(op.name).from_operation(op)
            view.run_reference(*[values.get(v) for v in op.operands])


def check(signature, body, arrays, epilogue="", expected=None, rtol=1e-6):
    """Emulates the kernel on copies of `arrays`, runs the references on
    other copies (or takes `expected`), and prints the largest difference
    of each array the kernel writes."""
    text = program(signature, body, epilogue)
    module = lamina.parse(text)
    emulated = [a.copy() for a in arrays]
    EMULATED.compile(module, entry="main")(*emulated)
    if expected is None:
        expected = [a.copy() for a in arrays]
        reference_run(module, expected)
    for index, (got, want, given) in enumerate(zip(emulated, expected, arrays)):
        if np.array_equal(got, given, equal_nan=True) and np.array_equal(want, given,
                                                                         equal_nan=True):
            continue
        got32, want32 = got.astype(np.float32), want.astype(np.float32)
        close = np.allclose(got32, want32, rtol=rtol, atol=rtol)
        print(f"arg{index}: {'matches' if close else 'DIFFERS'} "
              f"(max abs difference {np.abs(got32 - want32).max():.3g})")


def random(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


# Boxes past the end of a global memref load zeros and store nothing.
# CHECK-LABEL: TEST: copies_with_predication
# CHECK-NEXT: arg1: matches
@run
def copies_with_predication():
    check(["memref<100x70xf32>", "memref<100x70xf32>"], """
  %s = "hw.alloc"() : () -> !smem<64x64xf32, smem>
  %r = "hw.alloc"() : () -> !reg<64x64xf32, reg>
  %c64 = arith.constant 64 : index
  %c48 = arith.constant 48 : index
  "hw.copy"(%arg0, %s, %c64, %c48) : (memref<100x70xf32>, !smem<64x64xf32, smem>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.copy"(%s, %r, %c0, %c0) : (!smem<64x64xf32, smem>, !reg<64x64xf32, reg>, index, index) -> ()
  "hw.copy"(%r, %arg1, %c48, %c16) : (!reg<64x64xf32, reg>, memref<100x70xf32>, index, index) -> ()
""", [random((100, 70)), np.zeros((100, 70), np.float32)])


# Async copies into stages of a shared tile, then a stage into registers
# and back out at a column offset of the register tile's box.
# CHECK-LABEL: TEST: async_copies_and_stages
# CHECK-NEXT: arg1: matches
@run
def async_copies_and_stages():
    check(["memref<64x96xbf16>", "memref<32x32xbf16>"], """
  %s = "hw.alloc"() : () -> !smem<2x32x64xbf16, smem>
  %r = "hw.alloc"() : () -> !reg<32x32xbf16, reg>
  %t0 = "hw.async_copy"(%arg0, %s, %c0, %c0, %c0) : (memref<64x96xbf16>, !smem<2x32x64xbf16, smem>, index, index, index) -> !hw.token
  %t1 = "hw.async_copy"(%arg0, %s, %c32, %c32, %c1) : (memref<64x96xbf16>, !smem<2x32x64xbf16, smem>, index, index, index) -> !hw.token
  "hw.commit"(%t0, %t1) : (!hw.token, !hw.token) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.copy"(%s, %r, %c1, %c0, %c32) : (!smem<2x32x64xbf16, smem>, !reg<32x32xbf16, reg>, index, index, index) -> ()
  "hw.copy"(%r, %arg1, %c0, %c0) : (!reg<32x32xbf16, reg>, memref<32x32xbf16>, index, index) -> ()
""", [random((64, 96), numpy_dtype("bf16")), np.zeros((32, 32), numpy_dtype("bf16"))])


# A TMA load on an mbarrier behaves as a copy.
# CHECK-LABEL: TEST: tma_load
# CHECK-NEXT: arg1: matches
@run
def tma_load():
    check(["memref<40x64xf16>", "memref<40x64xf16>"], """
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %s = "hw.alloc"() : () -> !smem<64x64xf16, smem>
  "hw.tma_load"(%arg0, %s, %bar, %c0, %c0, %c0) : (memref<40x64xf16>, !smem<64x64xf16, smem>, !hw.mbarrier, index, index, index) -> ()
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  "hw.copy"(%s, %arg1, %c0, %c0) : (!smem<64x64xf16, smem>, memref<40x64xf16>, index, index) -> ()
""", [random((40, 64), np.float16), np.zeros((40, 64), np.float16)])


MMA = """
  %as = "hw.alloc"() : () -> !smem<2x32x16x{t}, smem>
  %bs = "hw.alloc"() : () -> !smem<16x48x{t}, smem>
  %acc = "hw.alloc"() : () -> !reg<32x48xf32, reg>
  "hw.copy"(%arg0, %as, %c0, %c0, %c1) : (memref<32x16x{t}>, !smem<2x32x16x{t}, smem>, index, index, index) -> ()
  "hw.copy"(%arg1, %bs, %c0, %c0) : (memref<16x48x{t}>, !smem<16x48x{t}, smem>, index, index) -> ()
  "hw.copy"(%arg2, %acc, %c0, %c0) : (memref<32x48xf32>, !reg<32x48xf32, reg>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.mma"(%as, %bs, %acc, %c1) : (!smem<2x32x16x{t}, smem>, !smem<16x48x{t}, smem>, !reg<32x48xf32, reg>, index) -> ()
  "hw.store"(%acc, %arg2, %c0, %c0) {{operandSegmentSizes = array<i32: 1, 1, 0, 2>}} : (!reg<32x48xf32, reg>, memref<32x48xf32>, index, index) -> ()
"""


# C += A x B in f32 from f16, bf16 and tf32 operands (f32 operands lose
# their low 13 mantissa bits: a plain f32 product differs).
# CHECK-LABEL: TEST: mma
# CHECK-NEXT: f16: arg2: matches
# CHECK-NEXT: bf16: arg2: matches
# CHECK-NEXT: f32: arg2: matches
# CHECK-NEXT: tf32 differs from f32: True
@run
def mma():
    for t in ("f16", "bf16", "f32"):
        print(f"{t}: ", end="")
        dtype = numpy_dtype(t)
        check([f"memref<32x16x{t}>", f"memref<16x48x{t}>", "memref<32x48xf32>"],
              MMA.format(t=t), [random((32, 16), dtype), random((16, 48), dtype),
                                random((32, 48))], rtol=1e-5)
    a, b = random((32, 16)), random((16, 48))
    print("tf32 differs from f32:", not np.allclose(
        lamina.dialects.hw.to_tf32(a) @ lamina.dialects.hw.to_tf32(b), a @ b, rtol=1e-6))


ELEMENTWISE = """
  %x = "hw.alloc"() : () -> !reg<64x48xf16, reg>
  %row = "hw.alloc"() : () -> !reg<1x48xf16, reg>
  %col = "hw.alloc"() : () -> !reg<64x1xf16, reg>
  %y = "hw.alloc"() : () -> !reg<64x48xf16, reg>
  %w = "hw.alloc"() {{warps = array<i64: 4, 1>}} : () -> !reg<64x48xf32, reg>
  %m = "hw.alloc"() {{warps = array<i64: 4, 1>}} : () -> !reg<64x1xf32, reg>
  "hw.copy"(%arg0, %x, %c0, %c0) : (memref<64x48xf16>, !reg<64x48xf16, reg>, index, index) -> ()
  "hw.copy"(%arg1, %row, %c0, %c0) : (memref<1x48xf16>, !reg<1x48xf16, reg>, index, index) -> ()
  "hw.copy"(%arg2, %col, %c0, %c0) : (memref<64x1xf16>, !reg<64x1xf16, reg>, index, index) -> ()
  "hw.{op}"(%x, %row, %y) : (!reg<64x48xf16, reg>, !reg<1x48xf16, reg>, !reg<64x48xf16, reg>) -> ()
  "hw.{op}"(%y, %col, %y) : (!reg<64x48xf16, reg>, !reg<64x1xf16, reg>, !reg<64x48xf16, reg>) -> ()
  "hw.{op}"(%y, %x, %y) : (!reg<64x48xf16, reg>, !reg<64x48xf16, reg>, !reg<64x48xf16, reg>) -> ()
  "hw.{unary}"(%y, %y) : (!reg<64x48xf16, reg>, !reg<64x48xf16, reg>) -> ()
  "hw.cast"(%y, %w) : (!reg<64x48xf16, reg>, !reg<64x48xf32, reg>) -> ()
  "hw.{reduce}"(%w, %m) : (!reg<64x48xf32, reg>, !reg<64x1xf32, reg>) -> ()
  "hw.sub"(%w, %m, %w) : (!reg<64x48xf32, reg>, !reg<64x1xf32, reg>, !reg<64x48xf32, reg>) -> ()
  "hw.store"(%w, %arg3, %c0, %c0) {{operandSegmentSizes = array<i32: 1, 1, 0, 2>}} : (!reg<64x48xf32, reg>, memref<64x48xf32>, index, index) -> ()
"""


# Elementwise ops with row, column and full operands in f16, casts and row
# reductions, each combination once.
# CHECK-LABEL: TEST: register_tiles
# CHECK-NEXT: add neg reduce_sum: arg3: matches
# CHECK-NEXT: sub exp reduce_max: arg3: matches
# CHECK-NEXT: mul relu reduce_sum: arg3: matches
# CHECK-NEXT: max gelu reduce_max: arg3: matches
@run
def register_tiles():
    for op, unary, reduce in (("add", "neg", "reduce_sum"), ("sub", "exp", "reduce_max"),
                              ("mul", "relu", "reduce_sum"), ("max", "gelu", "reduce_max")):
        print(f"{op} {unary} {reduce}: ", end="")
        check(["memref<64x48xf16>", "memref<1x48xf16>", "memref<64x1xf16>",
               "memref<64x48xf32>"], ELEMENTWISE.format(op=op, unary=unary, reduce=reduce),
              [random((64, 48), np.float16), random((1, 48), np.float16),
               random((64, 1), np.float16), np.zeros((64, 48), np.float32)], rtol=2e-3)


# `hw.elementwise` computes any elementwise nn op on register tiles, from
# the op's scalar form with its attributes (the emulation takes erf, tanh
# and sigmoid as rational approximations, error 3.2e-7, where the
# reference has NumPy's), a second operand broadcast as a row.
# CHECK-LABEL: TEST: elementwise_of_nn_ops
# CHECK-NEXT: nn.gelu: arg2: matches
# CHECK-NEXT: nn.gelu {approximate = "tanh"}: arg2: matches
# CHECK-NEXT: nn.silu: arg2: matches
# CHECK-NEXT: nn.exp: arg2: matches
# CHECK-NEXT: nn.minimum: arg2: matches
# CHECK-NEXT: nn.div: arg2: matches
@run
def elementwise_of_nn_ops():
    for fn, attributes, binary in (("nn.gelu", "", False),
                                   ("nn.gelu", ', approximate = "tanh"', False),
                                   ("nn.silu", "", False), ("nn.exp", "", False),
                                   ("nn.minimum", "", True), ("nn.div", "", True)):
        print(f"{fn}{' {' + attributes[2:] + '}' if attributes else ''}: ", end="")
        inputs = "%x, %row" if binary else "%x"
        types = "!reg<32x48xf32, reg>, !reg<1x48xf32, reg>" if binary else "!reg<32x48xf32, reg>"
        check(["memref<32x48xf32>", "memref<1x48xf32>", "memref<32x48xf32>"], f"""
  %x = "hw.alloc"() : () -> !reg<32x48xf32, reg>
  %row = "hw.alloc"() : () -> !reg<1x48xf32, reg>
  %y = "hw.alloc"() : () -> !reg<32x48xf32, reg>
  "hw.copy"(%arg0, %x, %c0, %c0) : (memref<32x48xf32>, !reg<32x48xf32, reg>, index, index) -> ()
  "hw.copy"(%arg1, %row, %c0, %c0) : (memref<1x48xf32>, !reg<1x48xf32, reg>, index, index) -> ()
  "hw.elementwise"({inputs}, %y) {{fn = "{fn}"{attributes}}} : ({types}, !reg<32x48xf32, reg>) -> ()
  "hw.store"(%y, %arg2, %c0, %c0) {{operandSegmentSizes = array<i32: 1, 1, 0, 2>}} : (!reg<32x48xf32, reg>, memref<32x48xf32>, index, index) -> ()
""", [random((32, 48)) * 3, random((1, 48)) + 2, np.zeros((32, 48), np.float32)], rtol=1e-5)


# A store converts f32 to f16 and skips the elements past the memref's
# end; fill sets shared and register tiles.
# CHECK-LABEL: TEST: fill_and_store
# CHECK-NEXT: arg0: matches
@run
def fill_and_store():
    check(["memref<50x40xf16>"], """
  %r = "hw.alloc"() : () -> !reg<32x32xf32, reg>
  %s = "hw.alloc"() : () -> !smem<32x32xf32, smem>
  %c24 = arith.constant 24 : index
  "hw.fill"(%s) {value = 2.0 : f64} : (!smem<32x32xf32, smem>) -> ()
  "hw.barrier"() : () -> ()
  "hw.copy"(%s, %r, %c0, %c0) : (!smem<32x32xf32, smem>, !reg<32x32xf32, reg>, index, index) -> ()
  "hw.fill"(%r) {value = 1.5 : f64} : (!reg<32x32xf32, reg>) -> ()
  "hw.store"(%r, %arg0, %c24, %c16) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!reg<32x32xf32, reg>, memref<50x40xf16>, index, index) -> ()
""", [np.zeros((50, 40), np.float16)])


# A store's epilogue gets each element and, per extra, the element of a
# bias vector at its column and of a residual at its position.
# CHECK-LABEL: TEST: store_epilogue
# CHECK-NEXT: arg1: matches
@run
def store_epilogue():
    acc = random((32, 32))
    bias, residual = random(45, np.float16), random((40, 45), np.float16)
    out = np.zeros((40, 45), np.float16)
    expected = out.copy()
    rows, cols = slice(16, 40), slice(16, 45)
    value = np.maximum(acc[:24, :29] + bias[cols].astype(np.float32), 0) + \
        residual[rows, cols].astype(np.float32)
    expected[rows, cols] = value.astype(np.float16)
    check(["memref<32x32xf32>", "memref<40x45xf16>", "memref<45xf16>", "memref<40x45xf16>"], """
  %r = "hw.alloc"() : () -> !reg<32x32xf32, reg>
  "hw.copy"(%arg0, %r, %c0, %c0) : (memref<32x32xf32>, !reg<32x32xf32, reg>, index, index) -> ()
  "hw.store"(%r, %arg1, %arg2, %arg3, %c16, %c16) {epilogue = @bias_relu_residual, operandSegmentSizes = array<i32: 1, 1, 2, 2>} : (!reg<32x32xf32, reg>, memref<40x45xf16>, memref<45xf16>, memref<40x45xf16>, index, index) -> ()
""", [acc, out, bias, residual], epilogue="""
func.func private @bias_relu_residual(%acc: f32, %bias: f16, %residual: f16) -> f16 {
  %b = arith.extf %bias : f16 to f32
  %r = arith.extf %residual : f16 to f32
  %zero = arith.constant 0.0 : f32
  %s = arith.addf %acc, %b : f32
  %relu = arith.maximumf %s, %zero : f32
  %y = arith.addf %relu, %r : f32
  %h = arith.truncf %y : f32 to f16
  return %h : f16
}
""", expected=[acc, expected, bias, residual], rtol=1e-3)


# Memrefs in global memory are passed in place: a copy made on the way in
# would lose what the kernel writes, so arrays that would need one are
# refused.
# CHECK-LABEL: TEST: in_place_arguments
# CHECK-NEXT: <compiled @main(memref<8x32xf32>, memref<8x32xf32>) -> ()>
# CHECK-NEXT: written in place: True
# CHECK-NEXT: ValueError: @main argument #1: memref<8x32xf32> is passed in place (the function may write it): give a writeable, C-contiguous NumPy array
# CHECK-NEXT: ValueError: @main argument #1: memref<8x32xf32> is passed in place (the function may write it): give a writeable, C-contiguous NumPy array
# CHECK-NEXT: TypeError: @main argument #0: expected memref<8x32xf32> (float32 elements), got a float64 array; convert it with .astype()
@run
def in_place_arguments():
    module = lamina.parse(program(["memref<8x32xf32>", "memref<8x32xf32>"], """
  %r = "hw.alloc"() : () -> !reg<8x32xf32, reg>
  "hw.copy"(%arg0, %r, %c0, %c0) : (memref<8x32xf32>, !reg<8x32xf32, reg>, index, index) -> ()
  "hw.copy"(%r, %arg1, %c0, %c0) : (!reg<8x32xf32, reg>, memref<8x32xf32>, index, index) -> ()
"""))
    function = EMULATED.compile(module, entry="main")
    print(function)
    x, y = random((8, 32)), np.zeros((8, 32), np.float32)
    function(x, y)
    print("written in place:", bool((x == y).all()))
    read_only = np.zeros((8, 32), np.float32)
    read_only.flags.writeable = False
    for arguments in ((x, np.zeros((32, 8), np.float32).T), (x, read_only),
                      (x.astype(np.float64), y)):
        try:
            function(*arguments)
        except (TypeError, ValueError) as error:
            print(f"{type(error).__name__}: {error}")
