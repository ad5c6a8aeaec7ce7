# RUN: %PYTHON %s | FileCheck %s
#
# The declaration kinds of Lamina's op-definition helper beyond tensors:
# memrefs in memory spaces, scalars, a dialect's own type, ops without and
# with several and variadic results, and every attribute kind.

import numpy as np
from mlir import ir
from mlir.dialects import func

from lamina.context import make_context, verify
from lamina.diagnostics import DiagnosticCollector
from lamina.dialects.opdef import (AttrKind, DenseElementsAttr, Dialect, F32Attr, F64Attr,
                                   I32Attr, Index, MemRefOf, MemorySpaceAttr, Operand, Result,
                                   ScalarOf, StrArrayAttr, StrAttr, SymbolRefAttr, TensorOf,
                                   TypeAttr, Variadic, VerifyError)
from lamina.types import MemRefType, ScalarType, TensorType


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


class Kinds(Dialect, name="kinds"):
    """A dialect that exists only in this test."""


class FenceType(Kinds.Type, name="fence"):
    """A dialect-defined type."""


class _Rounding(AttrKind):
    """A user-defined attribute kind: a rounding mode as an integer 0-3."""

    description = "a rounding mode (0-3)"
    irdl_constraint = 'irdl.base "#builtin.integer"'

    def to_python(self, attr):
        if isinstance(attr, ir.IntegerAttr):
            return ir.IntegerAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(8), value)

    def check(self, value):
        return None if 0 <= value <= 3 else f"{value} is not a rounding mode"


Rounding = _Rounding()


class StoreOp(Kinds.Operation, name="store"):
    """Stores a register tile to shared memory at an index; no results."""

    value: Operand[MemRefOf("f16", space="private")]
    tile: Operand[MemRefOf("f16", space="workgroup")]
    row: Operand[Index]
    space: MemorySpaceAttr = "workgroup"

    def verify(self, value, tile, row):
        if value.shape != tile.shape[1:]:
            raise VerifyError(f"{value} is not a row of {tile}")


class IssueOp(Kinds.Operation, name="issue"):
    """Two results of different kinds and a fence."""

    x: Operand[TensorOf("f32")]
    count: Operand[ScalarOf("i32", "i64")]
    doubled: Result
    total: Result[ScalarOf("f32")]
    fence: Result[FenceType]

    def infer_type(self, x, count):
        return x, ScalarType("f32"), FenceType.view()


class GatherOp(Kinds.Operation, name="gather"):
    """Variadic results of different types, with attributes of every kind."""

    inputs: Variadic[Operand]
    outputs: Variadic[Result]
    body: SymbolRefAttr
    label: StrAttr
    element: TypeAttr
    weights: DenseElementsAttr
    names: StrArrayAttr
    scale: F64Attr
    bias: F32Attr = 0.0
    lanes: I32Attr = 32
    rounding: Rounding = 0

    def infer_type(self, inputs):
        return inputs


ALL_KINDS = dict(body="kernel_0", label="main loop", element=TensorType((4,), "f16"),
                 weights=np.arange(4, dtype=np.float32), names=("a", "b"), scale=0.1,
                 bias=0.5, lanes=64, rounding=2)


# CHECK-LABEL: TEST: build_and_view
# CHECK: "kinds.store"(%{{.+}}, %{{.+}}, %{{.+}}) : (memref<16xf16, #gpu.address_space<private>>, memref<8x16xf16, #gpu.address_space<workgroup>>, index) -> ()
# CHECK: %{{.+}}:3 = "kinds.issue"(%{{.+}}, %{{.+}}) : (tensor<4xf32>, i32) -> (tensor<4xf32>, f32, !kinds.fence)
# CHECK: "kinds.gather"(%{{.+}}, %{{.+}}) {bias = 5.000000e-01 : f32, body = @kernel_0, element = tensor<4xf16>, label = "main loop", lanes = 64 : i32, names = ["a", "b"], rounding = 2 : i8, scale = 1.000000e-01 : f64, weights = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>} : (tensor<4xf32>, tensor<2x2xf16>) -> (tensor<4xf32>, tensor<2x2xf16>)
# CHECK: verifies: True
# CHECK: store returns: kinds.store
# CHECK: issue: tensor<4xf32> f32 !kinds.fence
# CHECK: store view: value memref<16xf16, #gpu.address_space<private>> tile memref<8x16xf16, #gpu.address_space<workgroup>> row index space workgroup
# CHECK: gather view: body=kernel_0 label=main loop element=tensor<4xf16> weights=[0.0, 1.0, 2.0, 3.0] names=('a', 'b') scale=0.1 bias=0.5 lanes=64 rounding=2
# CHECK: gather results: 2
@run
def build_and_view():
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        private = MemRefType((16,), "f16", "private").to_mlir()
        shared = MemRefType((8, 16), "f16", "workgroup").to_mlir()
        x_type = TensorType((4,), "f32").to_mlir()
        h_type = TensorType((2, 2), "f16").to_mlir()
        index, i32 = ir.IndexType.get(), ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([private, shared, index, x_type, i32, h_type], []))
            with ir.InsertionPoint(f.add_entry_block()):
                value, tile, row, x, count, h = f.arguments
                store = StoreOp.build(value, tile, row)
                issued = IssueOp.build(x, count)
                gathered = GatherOp.build([x, h], **ALL_KINDS)
                func.ReturnOp([])
        print(module)
        print("verifies:", verify(module.operation))
        print("store returns:", store.name)
        print("issue:", *[r.type for r in issued])
        view = StoreOp.from_operation(store)
        print("store view:", *[f"{name} {t}" for name, t in zip(("value", "tile", "row"),
                                                                view.operand_types)],
              "space", view.space)
        g = GatherOp.from_operation(gathered[0].owner)
        print(f"gather view: body={g.body} label={g.label} element={g.element} "
              f"weights={g.weights.tolist()} names={g.names} scale={g.scale:.1f} "
              f"bias={g.bias} lanes={g.lanes} rounding={g.rounding}")
        print("gather results:", len(g.result("outputs")))


SOURCE = """\
func.func @f(%v: memref<16xf16, #gpu.address_space<private>>, %g: memref<8x16xf16>,
             %s: memref<8x16xf16, #gpu.address_space<workgroup>>, %x: tensor<4xf32>,
             %c: f32, %w: memref<8x8xf16, #gpu.address_space<workgroup>>) {
  "kinds.store"(%v, %g, %c) : (memref<16xf16, #gpu.address_space<private>>, memref<8x16xf16>, f32) -> ()
  "kinds.store"(%v, %s, %c) : (memref<16xf16, #gpu.address_space<private>>, memref<8x16xf16, #gpu.address_space<workgroup>>, f32) -> ()
  "kinds.store"(%v, %w) {space = 1 : i64} : (memref<16xf16, #gpu.address_space<private>>, memref<8x8xf16, #gpu.address_space<workgroup>>) -> ()
  %a:3 = "kinds.issue"(%x, %c) : (tensor<4xf32>, f32) -> (tensor<4xf32>, f32, !kinds.fence)
  %b:3 = "kinds.issue"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, f32, index)
  %y = "kinds.gather"(%x) {body = "k", label = "l", element = f32, weights = dense<1.0> : tensor<2xf32>, names = ["n"], scale = 1.0 : f64, rounding = 9 : i8} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
"""


# Each rule is reported at its op, naming the operand, result or attribute.
# CHECK-LABEL: TEST: verify_parsed
# CHECK: kinds.mlir:4:3: error: 'kinds.store' op operand #1 is in global memory; expected workgroup memory (#gpu.address_space<workgroup>)
# CHECK-NEXT: kinds.mlir:5:3: error: 'kinds.store' op operand #2 has type f32; expected index
# CHECK-NEXT: kinds.mlir:6:3: error: 'kinds.store' op attribute 'space' must be a memory space (#gpu.address_space<global|workgroup|private>), got 1 : i64
# CHECK-NEXT: kinds.mlir:7:10: error: 'kinds.issue' op operand #1 has type f32; expected i32 or i64
# CHECK-NEXT: kinds.mlir:8:10: error: 'kinds.issue' op result #2 has type index; expected !kinds.fence
# CHECK-NEXT: kinds.mlir:9:8: error: 'kinds.gather' op attribute 'body' must be a symbol reference (@name), got "k"
# CHECK-NEXT: errors: 6
@run
def verify_parsed():
    context = make_context()
    with context, DiagnosticCollector(context, "kinds.mlir") as diagnostics:
        module = ir.Module.parse(SOURCE)
        verify(module.operation)
    for diagnostic in diagnostics.diagnostics:
        print(diagnostic.format())
    print("errors:", len(diagnostics.errors))


# Builders check kinds, attribute values and the type rule first.
# CHECK-LABEL: TEST: build_errors
# CHECK: VerifyError: operand #0 is in workgroup memory; expected private memory
# CHECK: VerifyError: attribute 'rounding': 7 is not a rounding mode
# CHECK: VerifyError: attribute 'space': "texture" is not one of global, workgroup, private
# CHECK: VerifyError: attribute 'lanes': 4294967296 does not fit in a 32-bit integer
# CHECK: ops created: 0
@run
def build_errors():
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        shared = MemRefType((8, 16), "f16", "workgroup").to_mlir()
        private = MemRefType((16,), "f16", "private").to_mlir()
        x_type = TensorType((4,), "f32").to_mlir()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([shared, private, ir.IndexType.get(), x_type], []))
            with ir.InsertionPoint(f.add_entry_block()):
                tile, value, row, x = f.arguments
                attempts = [
                    lambda: StoreOp.build(tile, tile, row),
                    lambda: GatherOp.build([x], **{**ALL_KINDS, "rounding": 7}),
                    lambda: StoreOp.build(value, tile, row, space="texture"),
                    lambda: GatherOp.build([x], **{**ALL_KINDS, "lanes": 1 << 32}),
                ]
                for attempt in attempts:
                    try:
                        attempt()
                        print("built (unexpected)")
                    except VerifyError as e:
                        print(f"{type(e).__name__}: {e}")
        print("ops created:", len(f.entry_block.operations))
