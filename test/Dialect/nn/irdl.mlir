// RUN: lamina-opt --dump-irdl -o %t.irdl.mlir
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | FileCheck %s
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | mlir-opt --irdl-file=%t.irdl.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=IRDL < %t.irdl.mlir
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NO-IRDL
// RUN: not mlir-opt --irdl-file=%t.irdl.mlir --split-input-file %S/Inputs/wrong-kinds.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KIND

// Upstream mlir-opt, given the IRDL that lamina-opt dumps, parses, verifies
// and prints nn IR: the dialect is usable without Lamina. Each operand,
// result and required attribute is constrained by its kind, so upstream
// rejects nn ops on memrefs or scalars (the element types, shapes and
// attribute values are Lamina's Python rules, which IRDL cannot state).

// KIND: wrong-kinds.mlir:4:8: error: expected base type 'builtin.tensor' but got 'builtin.memref'
// KIND: wrong-kinds.mlir:11:8: error: expected base type 'builtin.tensor' but got 'builtin.f32'
// KIND: wrong-kinds.mlir:18:8: error: expected base type 'builtin.tensor' but got 'builtin.memref'
// KIND: wrong-kinds.mlir:25:8: error: expected base attribute 'builtin.string' but got 'builtin.integer'

// IRDL-LABEL: irdl.dialect @nn {
// IRDL: irdl.operation @relu {
// IRDL-NEXT: %[[X:.+]] = irdl.base "!builtin.tensor"
// IRDL-NEXT: %[[R:.+]] = irdl.base "!builtin.tensor"
// IRDL-NEXT: irdl.operands(x: %[[X]])
// IRDL-NEXT: irdl.results(result: %[[R]])
// IRDL: irdl.operation @gelu {
// IRDL-NOT: irdl.attributes
// IRDL: irdl.operation @compare {
// IRDL: %[[P:.+]] = irdl.base "#builtin.string"
// IRDL: irdl.attributes {"predicate" = %[[P]]}
// IRDL: irdl.operation @conv2d {
// IRDL: irdl.operands(x: %{{.+}}, weight: %{{.+}}, bias: optional %{{.+}})
// IRDL: irdl.operation @attention {
// IRDL: irdl.operands(q: %{{.+}}, k: %{{.+}}, v: %{{.+}}, mask: optional %{{.+}})
// IRDL: irdl.operation @concat {
// IRDL: irdl.operands(inputs_head: %{{.+}}, inputs: variadic %{{.+}})
// IRDL: irdl.attributes {"axis" = %{{.+}}}
// IRDL: irdl.operation @pad {

// NO-IRDL: irdl.mlir:[[@LINE+15]]:23: error: operation being parsed with an unregistered dialect

// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8x16xf32>, %[[W:[^:]+]]: tensor<16x16xf32>, %[[G:[^:]+]]: tensor<16xf32>, %[[M:[^:]+]]: tensor<8x8xf32>)
// CHECK: %[[N:.+]] = "nn.layer_norm"(%[[X]], %[[G]], %[[G]]) {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[Q:.+]] = "nn.matmul"(%[[N]], %[[W]]) : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[A:.+]] = "nn.attention"(%[[Q]], %[[Q]], %[[Q]], %[[M]]) {causal = true} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[R:.+]] = "nn.add"(%[[X]], %[[A]]) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[S:.+]] = "nn.reduce_mean"(%[[R]]) {axes = array<i64: -1>, keepdims = true} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
// CHECK: %[[C:.+]] = "nn.compare"(%[[R]], %[[S]]) {predicate = "gt"} : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xi1>
// CHECK: %[[Z:.+]] = "nn.select"(%[[C]], %[[R]], %[[S]]) : (tensor<2x8x16xi1>, tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[K:.+]] = "nn.concat"(%[[Z]], %[[Z]]) {axis = 0 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
// CHECK: return %[[K]]
func.func @block(%x: tensor<2x8x16xf32>, %w: tensor<16x16xf32>, %g: tensor<16xf32>,
                 %m: tensor<8x8xf32>) -> tensor<4x8x16xf32> {
  %n = "nn.layer_norm"(%x, %g, %g) {epsilon = 1.0e-5 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %q = "nn.matmul"(%n, %w) : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %a = "nn.attention"(%q, %q, %q, %m) {causal = true} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xf32>) -> tensor<2x8x16xf32>
  %r = "nn.add"(%x, %a) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "nn.reduce_mean"(%r) {axes = array<i64: -1>, keepdims = true} : (tensor<2x8x16xf32>) -> tensor<2x8x1xf32>
  %c = "nn.compare"(%r, %s) {predicate = "gt"} : (tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xi1>
  %z = "nn.select"(%c, %r, %s) : (tensor<2x8x16xi1>, tensor<2x8x16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x16xf32>
  %k = "nn.concat"(%z, %z) {axis = 0 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
  return %k : tensor<4x8x16xf32>
}

// CHECK-LABEL: func.func @every_op_is_known
// CHECK-COUNT-41: "nn.
func.func @every_op_is_known(%x: tensor<1x2x4x4xf32>, %m: tensor<1x2x4x4xi1>, %b: tensor<2xf32>,
                             %w: tensor<2x2x1x1xf32>, %g: tensor<4xf32>) {
  %0 = "nn.neg"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = "nn.abs"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = "nn.exp"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = "nn.log"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = "nn.sqrt"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %5 = "nn.rsqrt"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %6 = "nn.tanh"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %7 = "nn.sigmoid"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %8 = "nn.relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %9 = "nn.erf"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %10 = "nn.silu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %11 = "nn.gelu"(%x) {approximate = "tanh"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %12 = "nn.add"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %13 = "nn.sub"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %14 = "nn.mul"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %15 = "nn.div"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %16 = "nn.maximum"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %17 = "nn.minimum"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %18 = "nn.pow"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %19 = "nn.compare"(%x, %x) {predicate = "le"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1>
  %20 = "nn.select"(%m, %x, %x) : (tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %21 = "nn.cast"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xbf16>
  %22 = "nn.matmul"(%x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %23 = "nn.conv2d"(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %24 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  %25 = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  %26 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
  %27 = "nn.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
  %28 = "nn.reduce_min"(%x) {axes = array<i64: 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
  %29 = "nn.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
  %30 = "nn.softmax"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %31 = "nn.log_softmax"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %32 = "nn.layer_norm"(%x, %g, %g) : (tensor<1x2x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %33 = "nn.rms_norm"(%x, %g) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %34 = "nn.attention"(%x, %x, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %35 = "nn.transpose"(%x) {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %36 = "nn.reshape"(%x) : (tensor<1x2x4x4xf32>) -> tensor<32xf32>
  %37 = "nn.broadcast_to"(%x) : (tensor<1x2x4x4xf32>) -> tensor<3x2x4x4xf32>
  %38 = "nn.concat"(%x, %x) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %39 = "nn.slice"(%x) {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 1, 1, 4, 4>} : (tensor<1x2x4x4xf32>) -> tensor<1x1x4x4xf32>
  %40 = "nn.pad"(%x) {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x5xf32>
  return
}
