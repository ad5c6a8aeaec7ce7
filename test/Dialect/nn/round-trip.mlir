// RUN: lamina-opt %s | lamina-opt | FileCheck %s
// RUN: lamina-opt %s --mlir-print-op-generic | lamina-opt | FileCheck %s
// RUN: lamina-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every nn op prints and parses back unchanged: operands, attributes exactly
// as written (a defaulted attribute that is omitted stays omitted, one that is
// written stays written) and types.

// GENERIC-LABEL: "func.func"
// GENERIC-SAME: sym_name = "unary_f32"
// GENERIC: "nn.neg"(%{{.*}}) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// GENERIC: "func.return"

// CHECK-LABEL: func.func @unary_f32
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4xf32>
// CHECK: %[[NEG:.+]] = "nn.neg"(%[[X]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[ABS:.+]] = "nn.abs"(%[[NEG]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[EXP:.+]] = "nn.exp"(%[[ABS]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[LOG:.+]] = "nn.log"(%[[EXP]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[SQRT:.+]] = "nn.sqrt"(%[[LOG]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[RSQRT:.+]] = "nn.rsqrt"(%[[SQRT]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[TANH:.+]] = "nn.tanh"(%[[RSQRT]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[SIGMOID:.+]] = "nn.sigmoid"(%[[TANH]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[RELU:.+]] = "nn.relu"(%[[SIGMOID]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[SILU:.+]] = "nn.silu"(%[[RELU]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[ERF:.+]] = "nn.erf"(%[[SILU]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[ERF]] : tensor<2x4xf32>
func.func @unary_f32(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "nn.neg"(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.abs"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = "nn.exp"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "nn.log"(%2) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "nn.sqrt"(%3) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = "nn.rsqrt"(%4) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %6 = "nn.tanh"(%5) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %7 = "nn.sigmoid"(%6) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %8 = "nn.relu"(%7) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %9 = "nn.silu"(%8) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %10 = "nn.erf"(%9) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %10 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @unary_rank0_and_f16_bf16
// CHECK: "nn.relu"(%{{.+}}) : (tensor<f32>) -> tensor<f32>
// CHECK: "nn.exp"(%{{.+}}) : (tensor<3xf16>) -> tensor<3xf16>
// CHECK: "nn.tanh"(%{{.+}}) : (tensor<3xbf16>) -> tensor<3xbf16>
func.func @unary_rank0_and_f16_bf16(%s: tensor<f32>, %h: tensor<3xf16>, %b: tensor<3xbf16>)
    -> (tensor<f32>, tensor<3xf16>, tensor<3xbf16>) {
  %0 = "nn.relu"(%s) : (tensor<f32>) -> tensor<f32>
  %1 = "nn.exp"(%h) : (tensor<3xf16>) -> tensor<3xf16>
  %2 = "nn.tanh"(%b) : (tensor<3xbf16>) -> tensor<3xbf16>
  return %0, %1, %2 : tensor<f32>, tensor<3xf16>, tensor<3xbf16>
}

// The default of `approximate` is "none": omitted, it stays omitted; written,
// it stays written.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8xf32>
// CHECK: %[[D:.+]] = "nn.gelu"(%[[X]]) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[N:.+]] = "nn.gelu"(%[[D]]) {approximate = "none"} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: "nn.gelu"(%[[N]]) {approximate = "tanh"} : (tensor<8xf32>) -> tensor<8xf32>
func.func @gelu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "nn.gelu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "nn.gelu"(%0) {approximate = "none"} : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "nn.gelu"(%1) {approximate = "tanh"} : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x4xf32>, %[[B:[^:]+]]: tensor<4xf32>, %[[C:[^:]+]]: tensor<2x1xf32>
// CHECK: %[[ADD:.+]] = "nn.add"(%[[A]], %[[B]]) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[SUB:.+]] = "nn.sub"(%[[ADD]], %[[C]]) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: %[[MUL:.+]] = "nn.mul"(%[[B]], %[[SUB]]) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[DIV:.+]] = "nn.div"(%[[MUL]], %[[A]]) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[MAX:.+]] = "nn.maximum"(%[[DIV]], %[[C]]) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: %[[MIN:.+]] = "nn.minimum"(%[[MAX]], %[[B]]) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[POW:.+]] = "nn.pow"(%[[C]], %[[B]]) : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[MIN]], %[[POW]]
func.func @binary_broadcast(%a: tensor<2x4xf32>, %b: tensor<4xf32>, %c: tensor<2x1xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "nn.add"(%a, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = "nn.sub"(%0, %c) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %2 = "nn.mul"(%b, %1) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "nn.div"(%2, %a) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "nn.maximum"(%3, %c) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %5 = "nn.minimum"(%4, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %6 = "nn.pow"(%c, %b) : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %5, %6 : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @binary_f16_bf16_rank0
// CHECK: "nn.add"(%{{.+}}, %{{.+}}) : (tensor<2x3xf16>, tensor<f16>) -> tensor<2x3xf16>
// CHECK: "nn.mul"(%{{.+}}, %{{.+}}) : (tensor<3xbf16>, tensor<2x1xbf16>) -> tensor<2x3xbf16>
func.func @binary_f16_bf16_rank0(%h: tensor<2x3xf16>, %s: tensor<f16>, %b: tensor<3xbf16>,
                                 %c: tensor<2x1xbf16>) -> (tensor<2x3xf16>, tensor<2x3xbf16>) {
  %0 = "nn.add"(%h, %s) : (tensor<2x3xf16>, tensor<f16>) -> tensor<2x3xf16>
  %1 = "nn.mul"(%b, %c) : (tensor<3xbf16>, tensor<2x1xbf16>) -> tensor<2x3xbf16>
  return %0, %1 : tensor<2x3xf16>, tensor<2x3xbf16>
}

// Constants are ordinary operands.
// CHECK-LABEL: func.func @dense_constant_operands
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>
// CHECK-DAG: %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[S:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[ADD:.+]] = "nn.add"(%[[X]], %[[C]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: "nn.mul"(%[[ADD]], %[[S]]) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
func.func @dense_constant_operands(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.constant dense<0.5> : tensor<f32>
  %0 = "nn.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.mul"(%0, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// CHECK-LABEL: func.func @compare_predicates
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x4xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "eq"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "ne"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "lt"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "le"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "gt"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%[[A]], %[[B]]) {predicate = "ge"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK: "nn.compare"(%{{.+}}, %{{.+}}) {predicate = "lt"} : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xi1>
func.func @compare_predicates(%a: tensor<2x4xf32>, %b: tensor<4xf32>, %c: tensor<3xbf16>) {
  %0 = "nn.compare"(%a, %b) {predicate = "eq"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %1 = "nn.compare"(%a, %b) {predicate = "ne"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %2 = "nn.compare"(%a, %b) {predicate = "lt"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %3 = "nn.compare"(%a, %b) {predicate = "le"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %4 = "nn.compare"(%a, %b) {predicate = "gt"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %5 = "nn.compare"(%a, %b) {predicate = "ge"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %6 = "nn.compare"(%c, %c) {predicate = "lt"} : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xi1>
  return
}

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[M:[^:]+]]: tensor<2x4xi1>, %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<2x1xf32>, %[[P:[^:]+]]: tensor<4xi1>
// CHECK: "nn.select"(%[[M]], %[[A]], %[[B]]) : (tensor<2x4xi1>, tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: "nn.select"(%[[M]], %[[P]], %[[P]]) : (tensor<2x4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
func.func @select(%m: tensor<2x4xi1>, %a: tensor<4xf32>, %b: tensor<2x1xf32>, %p: tensor<4xi1>)
    -> (tensor<2x4xf32>, tensor<2x4xi1>) {
  %0 = "nn.select"(%m, %a, %b) : (tensor<2x4xi1>, tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %1 = "nn.select"(%m, %p, %p) : (tensor<2x4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xi1>
}

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[H:.+]] = "nn.cast"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK: %[[B:.+]] = "nn.cast"(%[[H]]) : (tensor<2x3xf16>) -> tensor<2x3xbf16>
// CHECK: %[[M:.+]] = "nn.cast"(%[[B]]) : (tensor<2x3xbf16>) -> tensor<2x3xi1>
// CHECK: "nn.cast"(%[[M]]) : (tensor<2x3xi1>) -> tensor<2x3xf32>
func.func @cast(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "nn.cast"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %1 = "nn.cast"(%0) : (tensor<2x3xf16>) -> tensor<2x3xbf16>
  %2 = "nn.cast"(%1) : (tensor<2x3xbf16>) -> tensor<2x3xi1>
  %3 = "nn.cast"(%2) : (tensor<2x3xi1>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<8x16xf32>, %[[BA:[^:]+]]: tensor<3x4x8xf32>, %[[BB:[^:]+]]: tensor<2x1x8x5xf32>
// CHECK: "nn.matmul"(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: "nn.matmul"(%[[BA]], %[[B]]) : (tensor<3x4x8xf32>, tensor<8x16xf32>) -> tensor<3x4x16xf32>
// CHECK: "nn.matmul"(%[[BA]], %[[BB]]) : (tensor<3x4x8xf32>, tensor<2x1x8x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK: "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// CHECK: "nn.matmul"(%[[A]], %[[B]]) {precision = "tf32"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %ba: tensor<3x4x8xf32>,
                  %bb: tensor<2x1x8x5xf32>, %h: tensor<4x8xf16>, %g: tensor<8x2xf16>,
                  %i: tensor<4x8xi8>, %j: tensor<8x2xi8>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.matmul"(%ba, %b) : (tensor<3x4x8xf32>, tensor<8x16xf32>) -> tensor<3x4x16xf32>
  %2 = "nn.matmul"(%ba, %bb) : (tensor<3x4x8xf32>, tensor<2x1x8x5xf32>) -> tensor<2x3x4x5xf32>
  %3 = "nn.matmul"(%h, %g) : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  %4 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %5 = "nn.matmul"(%i, %j) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
  return
}

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8x8xf32>, %[[W:[^:]+]]: tensor<6x4x3x3xf32>, %[[B:[^:]+]]: tensor<6xf32>, %[[WG:[^:]+]]: tensor<8x2x3x3xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[W]]) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[W]], %[[B]]) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[W]], %[[B]]) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[W]]) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[W]]) {dilations = array<i64: 2, 2>, padding = array<i64: 0, 1, 2, 3>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x8xf32>
// CHECK: "nn.conv2d"(%[[X]], %[[WG]]) {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
// CHECK: "nn.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {strides = array<i64: 1, 2>} : (tensor<2x3x5x5xbf16>, tensor<4x3x1x1xbf16>, tensor<4xbf16>) -> tensor<2x4x5x3xbf16>
// CHECK: "nn.conv2d"(%{{.+}}, %[[W]]) {layout = "NHWC", strides = array<i64: 2, 1>} : (tensor<1x8x8x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x3x6x6xf32>
func.func @conv2d(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>,
                  %wg: tensor<8x2x3x3xf32>, %xb: tensor<2x3x5x5xbf16>, %wb: tensor<4x3x1x1xbf16>,
                  %bb: tensor<4xbf16>, %xn: tensor<1x8x8x4xf32>) {
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  %1 = "nn.conv2d"(%x, %w, %b) : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  %2 = "nn.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  %3 = "nn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  %4 = "nn.conv2d"(%x, %w) {dilations = array<i64: 2, 2>, padding = array<i64: 0, 1, 2, 3>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x8xf32>
  %5 = "nn.conv2d"(%x, %wg) {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  %6 = "nn.conv2d"(%xb, %wb, %bb) {strides = array<i64: 1, 2>} : (tensor<2x3x5x5xbf16>, tensor<4x3x1x1xbf16>, tensor<4xbf16>) -> tensor<2x4x5x3xbf16>
  %7 = "nn.conv2d"(%xn, %w) {layout = "NHWC", strides = array<i64: 2, 1>} : (tensor<1x8x8x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x3x6x6xf32>
  return
}

// CHECK-LABEL: func.func @pooling
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x3x8x8xf32>
// CHECK: "nn.max_pool2d"(%[[X]]) {kernel = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
// CHECK: "nn.max_pool2d"(%[[X]]) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
// CHECK: "nn.avg_pool2d"(%[[X]]) {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
// CHECK: "nn.avg_pool2d"(%{{.+}}) {kernel = array<i64: 2, 1>} : (tensor<1x1x4x4xf16>) -> tensor<1x1x3x4xf16>
func.func @pooling(%x: tensor<1x3x8x8xf32>, %h: tensor<1x1x4x4xf16>) {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  %1 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %2 = "nn.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  %3 = "nn.avg_pool2d"(%h) {kernel = array<i64: 2, 1>} : (tensor<1x1x4x4xf16>) -> tensor<1x1x3x4xf16>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>
// CHECK: "nn.reduce_sum"(%[[X]]) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: "nn.reduce_max"(%[[X]]) {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK: "nn.reduce_min"(%[[X]]) {axes = array<i64: 0, -1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: "nn.reduce_mean"(%[[X]]) {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK: "nn.reduce_mean"(%[[X]]) {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK: "nn.reduce_sum"(%{{.+}}) {axes = array<i64: -2>} : (tensor<5x6xbf16>) -> tensor<6xbf16>
func.func @reductions(%x: tensor<2x3x4xf32>, %b: tensor<5x6xbf16>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.reduce_max"(%x) {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %2 = "nn.reduce_min"(%x) {axes = array<i64: 0, -1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %3 = "nn.reduce_mean"(%x) {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<f32>
  %4 = "nn.reduce_mean"(%x) {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %5 = "nn.reduce_sum"(%b) {axes = array<i64: -2>} : (tensor<5x6xbf16>) -> tensor<6xbf16>
  return
}

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8xf32>
// CHECK: "nn.softmax"(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: "nn.softmax"(%[[X]]) {axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: "nn.log_softmax"(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: "nn.log_softmax"(%[[X]]) {axis = -2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: "nn.softmax"(%{{.+}}) {axis = -1 : i64} : (tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @softmax(%x: tensor<2x8xf32>, %h: tensor<4x4xf16>) {
  %0 = "nn.softmax"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = "nn.softmax"(%x) {axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "nn.log_softmax"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = "nn.log_softmax"(%x) {axis = -2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = "nn.softmax"(%h) {axis = -1 : i64} : (tensor<4x4xf16>) -> tensor<4x4xf16>
  return
}

// CHECK-LABEL: func.func @normalization
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %[[G2:[^:]+]]: tensor<3x8xf32>
// CHECK: "nn.layer_norm"(%[[X]], %[[G]], %[[B]]) : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK: "nn.layer_norm"(%[[X]], %[[G2]], %[[G2]]) {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: "nn.rms_norm"(%[[X]], %[[G]]) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK: "nn.rms_norm"(%[[X]], %[[G2]]) {axis = -2 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: "nn.layer_norm"(%{{.+}}, %{{.+}}, %{{.+}}) {epsilon = 0.000000e+00 : f32} : (tensor<4x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
func.func @normalization(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>,
                         %g2: tensor<3x8xf32>, %xb: tensor<4x16xbf16>, %gb: tensor<16xbf16>) {
  %0 = "nn.layer_norm"(%x, %g, %b) : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %1 = "nn.layer_norm"(%x, %g2, %g2) {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
  %2 = "nn.rms_norm"(%x, %g) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %3 = "nn.rms_norm"(%x, %g2) {axis = -2 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
  %4 = "nn.layer_norm"(%xb, %gb, %gb) {epsilon = 0.0 : f32} : (tensor<4x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return
}

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x16x64xf32>, %[[K:[^:]+]]: tensor<2x32x64xf32>, %[[V:[^:]+]]: tensor<2x32x8xf32>, %[[M:[^:]+]]: tensor<16x32xf32>, %[[MB:[^:]+]]: tensor<2x1x32xf32>
// CHECK: "nn.attention"(%[[Q]], %[[K]], %[[V]]) : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
// CHECK: "nn.attention"(%[[Q]], %[[K]], %[[V]], %[[M]]) : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>, tensor<16x32xf32>) -> tensor<2x16x8xf32>
// CHECK: "nn.attention"(%[[Q]], %[[K]], %[[V]], %[[MB]]) {causal = true, scale = 1.250000e-01 : f32} : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>, tensor<2x1x32xf32>) -> tensor<2x16x8xf32>
// CHECK: "nn.attention"(%[[Q]], %[[K]], %[[V]]) {causal = false} : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
// CHECK: "nn.attention"(%{{.+}}, %{{.+}}, %{{.+}}) {causal = true} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
func.func @attention(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x32x8xf32>,
                     %m: tensor<16x32xf32>, %mb: tensor<2x1x32xf32>, %h: tensor<1x2x4x8xf16>) {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
  %1 = "nn.attention"(%q, %k, %v, %m) : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>, tensor<16x32xf32>) -> tensor<2x16x8xf32>
  %2 = "nn.attention"(%q, %k, %v, %mb) {causal = true, scale = 0.125 : f32} : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>, tensor<2x1x32xf32>) -> tensor<2x16x8xf32>
  %3 = "nn.attention"(%q, %k, %v) {causal = false} : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
  %4 = "nn.attention"(%h, %h, %h) {causal = true} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>, %[[M:[^:]+]]: tensor<2x3xi1>
// CHECK: "nn.transpose"(%[[X]]) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK: "nn.transpose"(%[[X]]) {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "nn.transpose"(%[[M]]) {perm = array<i64: 1, 0>} : (tensor<2x3xi1>) -> tensor<3x2xi1>
func.func @transpose(%x: tensor<2x3x4xf32>, %m: tensor<2x3xi1>) {
  %0 = "nn.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = "nn.transpose"(%x) {perm = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<2x3xi1>) -> tensor<3x2xi1>
  return
}

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x6xf32>
// CHECK: %[[R:.+]] = "nn.reshape"(%[[X]]) : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK: %[[F:.+]] = "nn.reshape"(%[[R]]) : (tensor<3x4xf32>) -> tensor<12xf32>
// CHECK: "nn.reshape"(%[[F]]) : (tensor<12xf32>) -> tensor<1x2x1x6xf32>
// CHECK: "nn.reshape"(%{{.+}}) : (tensor<1xbf16>) -> tensor<bf16>
func.func @reshape(%x: tensor<2x6xf32>, %s: tensor<1xbf16>) {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %1 = "nn.reshape"(%0) : (tensor<3x4xf32>) -> tensor<12xf32>
  %2 = "nn.reshape"(%1) : (tensor<12xf32>) -> tensor<1x2x1x6xf32>
  %3 = "nn.reshape"(%s) : (tensor<1xbf16>) -> tensor<bf16>
  return
}

// CHECK-LABEL: func.func @broadcast_to
// CHECK: "nn.broadcast_to"(%{{.+}}) : (tensor<1x4xf32>) -> tensor<3x4xf32>
// CHECK: "nn.broadcast_to"(%{{.+}}) : (tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK: "nn.broadcast_to"(%{{.+}}) : (tensor<f16>) -> tensor<2x2xf16>
func.func @broadcast_to(%x: tensor<1x4xf32>, %y: tensor<4xf32>, %s: tensor<f16>) {
  %0 = "nn.broadcast_to"(%x) : (tensor<1x4xf32>) -> tensor<3x4xf32>
  %1 = "nn.broadcast_to"(%y) : (tensor<4xf32>) -> tensor<2x3x4xf32>
  %2 = "nn.broadcast_to"(%s) : (tensor<f16>) -> tensor<2x2xf16>
  return
}

// concat is variadic: one, two or three operands. The first operand may
// differ in size from the rest; IRDL binds one type to the operands after it.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x4xf32>, %[[B:[^:]+]]: tensor<3x4xf32>, %[[M:[^:]+]]: tensor<3xi1>
// CHECK: "nn.concat"(%[[A]]) {axis = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: "nn.concat"(%[[A]], %[[B]]) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
// CHECK: "nn.concat"(%[[B]], %[[A]], %[[A]]) {axis = -2 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<7x4xf32>
// CHECK: "nn.concat"(%[[A]], %[[A]], %[[A]]) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
// CHECK: "nn.concat"(%[[M]], %[[M]]) {axis = 0 : i64} : (tensor<3xi1>, tensor<3xi1>) -> tensor<6xi1>
func.func @concat(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %m: tensor<3xi1>) {
  %0 = "nn.concat"(%a) {axis = 0 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %2 = "nn.concat"(%b, %a, %a) {axis = -2 : i64} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<7x4xf32>
  %3 = "nn.concat"(%a, %a, %a) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %4 = "nn.concat"(%m, %m) {axis = 0 : i64} : (tensor<3xi1>, tensor<3xi1>) -> tensor<6xi1>
  return
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8xf32>
// CHECK: "nn.slice"(%[[X]]) {limits = array<i64: 2, 5>, starts = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
// CHECK: "nn.slice"(%[[X]]) {limits = array<i64: 2, 8>, starts = array<i64: 1, 1>, strides = array<i64: 1, 3>} : (tensor<2x8xf32>) -> tensor<1x3xf32>
func.func @slice(%x: tensor<2x8xf32>) {
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 1>, limits = array<i64: 2, 5>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %1 = "nn.slice"(%x) {starts = array<i64: 1, 1>, limits = array<i64: 2, 8>, strides = array<i64: 1, 3>} : (tensor<2x8xf32>) -> tensor<1x3xf32>
  return
}

// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>
// CHECK: "nn.pad"(%[[X]]) {high = array<i64: 0, 2>, low = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK: "nn.pad"(%[[X]]) {high = array<i64: 1, 1>, low = array<i64: 2, 0>, value = -1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<5x4xf32>
// CHECK: "nn.pad"(%{{.+}}) {high = array<i64: 1>, low = array<i64: 1>, value = 0.000000e+00 : f32} : (tensor<3xf16>) -> tensor<5xf16>
func.func @pad(%x: tensor<2x3xf32>, %h: tensor<3xf16>) {
  %0 = "nn.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  %1 = "nn.pad"(%x) {low = array<i64: 2, 0>, high = array<i64: 1, 1>, value = -1.5 : f32} : (tensor<2x3xf32>) -> tensor<5x4xf32>
  %2 = "nn.pad"(%h) {low = array<i64: 1>, high = array<i64: 1>, value = 0.0 : f32} : (tensor<3xf16>) -> tensor<5xf16>
  return
}

// CHECK-LABEL: func.func @integers
// CHECK-SAME: (%[[T:[^:]+]]: tensor<10x4xf32>, %[[IDS:[^:]+]]: tensor<2x3xi64>
// CHECK: "nn.gather"(%[[T]], %[[IDS]]) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK: "nn.iota"() {axis = 1 : i64} : () -> tensor<2x3xi64>
// CHECK: "nn.add"(%{{.+}}, %[[IDS]]) : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK: "nn.cumsum"(%{{.+}}) {axis = 1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK: "nn.argmax"(%{{.+}}) {axis = -1 : i64, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
// CHECK: "nn.sin"
// CHECK: "nn.cos"
func.func @integers(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>) {
  %0 = "nn.gather"(%t, %ids) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = "nn.iota"() {axis = 1 : i64} : () -> tensor<2x3xi64>
  %2 = "nn.add"(%1, %ids) : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %3 = "nn.cumsum"(%2) {axis = 1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  %4 = "nn.argmax"(%0) {axis = -1 : i64, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %5 = "nn.sin"(%0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %6 = "nn.cos"(%0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @quantization
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>, %[[S:[^:]+]]: tensor<f32>, %[[Z:[^:]+]]: tensor<i8>, %[[CS:[^:]+]]: tensor<2xf32>, %[[CZ:[^:]+]]: tensor<2xui8>
// CHECK: %[[Q:.+]] = "nn.quantize"(%[[X]], %[[S]], %[[Z]]) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
// CHECK: "nn.dequantize"(%[[Q]], %[[S]], %[[Z]]) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
// CHECK: %[[U:.+]] = "nn.quantize"(%[[X]], %[[CS]], %[[CZ]]) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x3xui8>
// CHECK: "nn.dequantize"(%[[U]], %[[CS]], %[[CZ]]) {axis = 0 : i64} : (tensor<2x3xui8>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x3xf32>
func.func @quantization(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<i8>, %cs: tensor<2xf32>, %cz: tensor<2xui8>) {
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %1 = "nn.dequantize"(%0, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %2 = "nn.quantize"(%x, %cs, %cz) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x3xui8>
  %3 = "nn.dequantize"(%2, %cs, %cz) {axis = 0 : i64} : (tensor<2x3xui8>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @bits_and_remainders
// CHECK: "nn.bitwise_and"(%{{.+}}, %{{.+}}) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
// CHECK: "nn.bitwise_or"(%{{.+}}, %{{.+}}) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
// CHECK: "nn.bitwise_xor"(%{{.+}}, %{{.+}}) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CHECK: "nn.shift_left"(%{{.+}}, %{{.+}}) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
// CHECK: "nn.shift_right"(%{{.+}}, %{{.+}}) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
// CHECK: "nn.remainder"(%{{.+}}, %{{.+}}) : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
// CHECK: "nn.cast"(%{{.+}}) : (tensor<2x4xi32>) -> tensor<2x4xui16>
func.func @bits_and_remainders(%a: tensor<2x4xi32>, %b: tensor<4xi32>, %x: tensor<2x4xf64>) -> (tensor<2x4xi32>, tensor<2x4xf64>, tensor<2x4xui16>) {
  %0 = "nn.bitwise_and"(%a, %b) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  %1 = "nn.bitwise_or"(%0, %b) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  %2 = "nn.bitwise_xor"(%1, %a) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  %3 = "nn.shift_left"(%2, %b) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  %4 = "nn.shift_right"(%3, %b) : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  %5 = "nn.remainder"(%x, %x) : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %6 = "nn.cast"(%4) : (tensor<2x4xi32>) -> tensor<2x4xui16>
  return %4, %5, %6 : tensor<2x4xi32>, tensor<2x4xf64>, tensor<2x4xui16>
}
