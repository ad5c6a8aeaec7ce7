# RUN: %PYTHON %s | FileCheck %s

# A new dialect defined in Python with Lamina's op-definition helper: its
# IRDL, idempotent loading, building ops, views of ops, and verification.

from typing import Optional

from mlir import ir
from mlir.dialects import func

from lamina.context import make_context, verify
from lamina.diagnostics import DiagnosticCollector
from lamina.dialects.opdef import (BoolAttr, Dialect, DialectError, EnumAttr, FloatAttr,
                                   I64ArrayAttr, IntAttr, Operand, Region, Result, TensorType,
                                   Variadic, VerifyError, lookup_op, registered_dialects)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


class Toy(Dialect, name="toy"):
    """A dialect that exists only in this test."""


class ScaleOp(Toy.Operation, name="scale"):
    """`x * factor + bias`, the bias broadcast along the last dim."""

    x: Operand
    bias: Optional[Operand]
    result: Result
    factor: FloatAttr = 1.0
    mode: EnumAttr("fast", "exact") = "exact"

    def infer_type(self, x, bias):
        if bias is not None and bias.shape != x.shape[-1:]:
            raise VerifyError(f"bias {bias} does not match the last dim of {x}")
        return x


class StackOp(Toy.Operation, name="stack"):
    """Stacks equally shaped tensors along a new leading dim."""

    inputs: Variadic[Operand]
    result: Result
    axis: IntAttr
    element_types = ("f32", "i1")

    def infer_type(self, inputs):
        if self.axis != 0:
            raise VerifyError(f"'axis' must be 0, got {self.axis}")
        return inputs[0].with_shape((len(inputs),) + inputs[0].shape)


class MixOp(Toy.Operation, name="mix"):
    """An optional and a variadic operand: IRDL needs the segment sizes."""

    x: Operand
    gate: Optional[Operand]
    extras: Variadic[Operand]
    result: Result

    def infer_type(self, x, gate, extras):
        return x.with_shape((1 + (gate is not None) + len(extras),) + x.shape)


class KernelOp(Toy.Operation, name="kernel"):
    """An op with a region and attributes of every kind."""

    x: Operand
    result: Result
    body: Region
    tile: I64ArrayAttr = (8, 8)
    unroll: BoolAttr = False

    def verify(self, x):
        if len(self.tile) != x.rank:
            raise VerifyError(f"'tile' needs {x.rank} sizes, got {len(self.tile)}")

    def infer_type(self, x):
        return x


# CHECK-LABEL: TEST: declarations
# CHECK: scale: operands ['x:single', 'bias:optional'] results ['result'] regions []
# CHECK-NEXT: scale: attributes ['factor=1.0', 'mode=exact']
# CHECK: stack: operands ['inputs:variadic'] results ['result'] regions []
# CHECK-NEXT: stack: attributes ['axis=<required>']
# CHECK: mix: operands ['x:single', 'gate:optional', 'extras:variadic'] results ['result'] regions []
# CHECK: kernel: operands ['x:single'] results ['result'] regions ['body']
# CHECK-NEXT: kernel: attributes ['tile=(8, 8)', 'unroll=False']
# CHECK: ops: ['scale', 'stack', 'mix', 'kernel']
@run
def declarations():
    for name, op in Toy.ops.items():
        operands = [f"{d.name}:{d.kind}" for d in op.operand_decls]
        print(f"{name}: operands {operands} results {list(op.result_names)} "
              f"regions {list(op.region_names)}")
        attrs = [f"{d.name}={'<required>' if d.required else d.default}" for d in op.attr_decls]
        print(f"{name}: attributes {attrs}")
    print("ops:", list(Toy.ops))


# Attributes with a default stay out of the IRDL (IRDL attributes are required).
# CHECK-LABEL: TEST: irdl
# CHECK: irdl.dialect @toy {
# CHECK: irdl.operation @scale {
# CHECK-NOT: irdl.attributes
# CHECK: irdl.operands(x: %{{.+}}, bias: optional %{{.+}})
# CHECK-NEXT: irdl.results(result: %{{.+}})
# CHECK-NEXT: }
# CHECK: irdl.operation @stack {
# CHECK: irdl.operands(inputs_head: %{{.+}}, inputs: variadic %{{.+}})
# CHECK: irdl.attributes {"axis" = %{{.+}}}
# CHECK: irdl.operation @mix {
# CHECK: irdl.operands(x: %{{.+}}, gate: optional %{{.+}}, extras: variadic %{{.+}})
# CHECK: irdl.operation @kernel {
# CHECK: %[[G:.+]] = irdl.region
# CHECK-NOT: irdl.attributes
# CHECK: irdl.regions(body: %[[G]])
# CHECK: IRDL verifies: True
@run
def irdl():
    text = Toy.irdl()
    print(text)
    with ir.Context():
        print("IRDL verifies:", ir.Module.parse(text).operation.verify())


# Every dialect registers itself; a context accepts the ops of every
# registered dialect, also of one defined after the context was made.
# CHECK-LABEL: TEST: registry
# CHECK: registered: True
# CHECK: lookup: ScaleOp None
# CHECK: late op verifies: True
# CHECK: duplicate: DialectError: dialect 'toy' is already defined (by __main__.Toy)
@run
def registry():
    print("registered:", Toy in registered_dialects())
    print("lookup:", lookup_op("toy.scale").__name__, lookup_op("toy.nothing"))
    context = make_context()

    class LateOp(Toy.Operation, name="late"):
        """Defined after the context."""

        x: Operand
        result: Result

        def infer_type(self, x):
            return x

    with context, ir.Location.unknown():
        module = ir.Module.parse('func.func @f(%x: tensor<4xf32>) {\n'
                                 '  %0 = "toy.late"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
                                 '  return\n}')
        print("late op verifies:", verify(module.operation))
    del Toy.ops["late"]
    try:
        class Again(Dialect, name="toy"):
            """A second dialect of the same name."""
    except DialectError as error:
        print(f"duplicate: {type(error).__name__}: {error}")


# Defaults are not written; other values are. The optional and variadic
# operands of toy.mix carry their segment sizes.
# CHECK-LABEL: TEST: build
# CHECK: func.func @f(%[[X:.+]]: tensor<2x4xf32>, %[[B:.+]]: tensor<4xf32>)
# CHECK-NEXT: %[[S0:.+]] = "toy.scale"(%[[X]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
# CHECK-NEXT: %[[S1:.+]] = "toy.scale"(%[[S0]], %[[B]]) {factor = 2.000000e+00 : f32, mode = "fast"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
# CHECK-NEXT: "toy.stack"(%[[X]], %[[S0]], %[[S1]]) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<3x2x4xf32>
# CHECK-NEXT: "toy.mix"(%[[X]], %[[X]], %[[X]]) {operandSegmentSizes = array<i32: 1, 0, 2>} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<3x2x4xf32>
# CHECK-NEXT: "toy.mix"(%[[X]], %[[X]]) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2x4xf32>
# CHECK-NEXT: "toy.kernel"(%[[S1]]) ({
# CHECK-NEXT: }) {tile = array<i64: 4, 2>, unroll = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
# CHECK: verifies: True True
# CHECK: scale views: factor=1.0 mode=exact bias=None / factor=2.0 mode=fast bias=tensor<4xf32>
# CHECK: mix groups: gate=None extras=2 / gate=present extras=0
# CHECK: kernel view: tile=(4, 2) unroll=True regions=1
@run
def build():
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        t = TensorType((2, 4), "f32")
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([t.to_mlir(), TensorType((4,), "f32").to_mlir()], []))
            with ir.InsertionPoint(f.add_entry_block()):
                x, b = f.arguments
                s0 = ScaleOp.build(x)
                s1 = ScaleOp.build(s0, b, factor=2.0, mode="fast")
                StackOp.build([x, s0, s1], axis=0)
                m0 = MixOp.build(x, None, [x, x])
                m1 = MixOp.build(x, x, [])
                k = KernelOp.build(s1, tile=(4, 2), unroll=True)
                func.ReturnOp([])
        print(module)
        print("verifies:", module.operation.verify(), Toy.verify(module.operation))
        v0, v1 = ScaleOp.from_operation(s0.owner), ScaleOp.from_operation(s1.owner)
        print(f"scale views: factor={v0.factor} mode={v0.mode} bias={v0.operand('bias')} / "
              f"factor={v1.factor} mode={v1.mode} bias={v1.operand('bias').type}")
        g0, g1 = MixOp.from_operation(m0.owner), MixOp.from_operation(m1.owner)
        print(f"mix groups: gate={g0.operand('gate')} extras={len(g0.operand('extras'))} / "
              f"gate={'present' if g1.operand('gate') is not None else None} "
              f"extras={len(g1.operand('extras'))}")
        kv = KernelOp.from_operation(k.owner)
        print(f"kernel view: tile={kv.tile} unroll={kv.unroll} regions={len(k.owner.regions)}")


# Builders check before they create anything.
# CHECK-LABEL: TEST: build_errors
# CHECK: VerifyError: attribute 'mode': "slow" is not one of "fast", "exact"
# CHECK: VerifyError: bias tensor<2x4xf32> does not match the last dim of tensor<2x4xf32>
# CHECK: VerifyError: operand #1 has element type f16; expected f32 or i1
# CHECK: VerifyError: 'tile' needs 2 sizes, got 3
# CHECK: TypeError: toy.stack requires attribute 'axis'
# CHECK: TypeError: toy.scale has no attribute 'alpha'
# CHECK: ops created: 0
@run
def build_errors():
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        t = TensorType((2, 4), "f32").to_mlir()
        h = TensorType((4,), "i1").to_mlir()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([t, TensorType((4,), "f16").to_mlir(), h], []))
            with ir.InsertionPoint(f.add_entry_block()):
                x, half, _ = f.arguments
                attempts = [
                    lambda: ScaleOp.build(x, mode="slow"),
                    lambda: ScaleOp.build(x, x),
                    lambda: StackOp.build([x, half], axis=0),
                    lambda: KernelOp.build(x, tile=(1, 2, 3)),
                    lambda: StackOp.build([x]),
                    lambda: ScaleOp.build(x, alpha=1.0),
                ]
                for attempt in attempts:
                    try:
                        attempt()
                        print("built (unexpected)")
                    except (VerifyError, TypeError) as e:
                        print(f"{type(e).__name__}: {e}")
        print("ops created:", len(f.entry_block.operations))


SOURCE = """\
func.func @f(%x: tensor<2x4xf32>, %b: tensor<3xf32>) {
  %0 = "toy.scale"(%x, %b) : (tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  %1 = "toy.stack"(%x) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
  %2 = "toy.scale"(%x) {mode = "slow"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "toy.scale"(%x) {factor = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "toy.kernel"(%x) ({
  }) {tile = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
  %5 = "toy.stack"(%x, %x) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2x4xf32>
  return
}
"""


# The Python rules of each op run on parsed IR; every violation is an error at
# the op, and the rules of good ops stay quiet.
# CHECK-LABEL: TEST: verify_parsed
# CHECK: upstream verifier: True
# CHECK-NEXT: python rules: False
# CHECK-NEXT: toy.mlir:2:8: error: 'toy.scale' op bias tensor<3xf32> does not match the last dim of tensor<2x4xf32>
# CHECK-NEXT: toy.mlir:3:8: error: 'toy.stack' op 'axis' must be 0, got 1
# CHECK-NEXT: toy.mlir:4:8: error: 'toy.scale' op attribute 'mode': "slow" is not one of "fast", "exact"
# CHECK-NEXT: toy.mlir:5:8: error: 'toy.scale' op attribute 'factor' must be a float, got 2 : i64
# CHECK-NEXT: toy.mlir:6:8: error: 'toy.kernel' op result type tensor<2x8xf32> does not match the inferred type tensor<2x4xf32>
# CHECK-NEXT: errors: 5
@run
def verify_parsed():
    context = make_context()
    with context, DiagnosticCollector(context, "toy.mlir") as diagnostics:
        module = ir.Module.parse(SOURCE)
        print("upstream verifier:", module.operation.verify())
        print("python rules:", Toy.verify(module.operation))
    for diagnostic in diagnostics.diagnostics:
        print(diagnostic.format())
    print("errors:", len(diagnostics.errors))


# Ops built without verification reach the structural rules that IRDL
# otherwise checks first while parsing.
# CHECK-LABEL: TEST: verify_structure
# CHECK: error: 'toy.scale' op expects 1 to 2 operands, got 3
# CHECK-NEXT: error: 'toy.scale' op expects 1 to 2 operands, got 0
# CHECK-NEXT: error: 'toy.stack' op requires attribute 'axis'
# CHECK-NEXT: error: 'toy.kernel' op expects 1 result(s), got 2
# CHECK-NEXT: error: 'toy.stack' op expects at least one operand
# CHECK-NEXT: verify: False
@run
def verify_structure():
    context = make_context()
    with context, ir.Location.unknown(), DiagnosticCollector(context) as diagnostics:
        module = ir.Module.create()
        t = TensorType((4,), "f32").to_mlir()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ([t], []))
            with ir.InsertionPoint(f.add_entry_block()):
                x = f.arguments[0]
                ir.Operation.create("toy.scale", results=[t], operands=[x, x, x])
                ir.Operation.create("toy.scale", results=[t], operands=[])
                ir.Operation.create("toy.stack", results=[t], operands=[x])
                ir.Operation.create("toy.kernel", results=[t, t], operands=[x], regions=1)
                ir.Operation.create("toy.stack", results=[t], operands=[],
                                    attributes={"axis": IntAttr.to_mlir(0)})
                func.ReturnOp([])
        ok = Toy.verify(module.operation)
    for diagnostic in diagnostics.diagnostics:
        print(diagnostic.format())
    print("verify:", ok)
