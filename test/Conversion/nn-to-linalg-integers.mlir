// Integer tensors in convert-nn-to-linalg: elementwise ops, comparisons,
// casts and reductions on i32 and i64 become integer arith ops in their
// own type (signed where signedness matters); gather extracts the element
// its clamped index names; iota, cumsum and argmax read linalg.index.
// Float ops are unchanged.
// RUN: lamina-opt %s --split-input-file --verify-diagnostics --convert-nn-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @add_i32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: i32):
// CHECK: arith.addi %[[A]], %[[B]] : i32
// CHECK-NOT: arith.addf
func.func @add_i32(%x: tensor<4x8xi32>, %y: tensor<8xi32>) -> tensor<4x8xi32> {
  %z = "nn.add"(%x, %y) : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return %z : tensor<4x8xi32>
}

// -----

// CHECK-LABEL: func.func @add_f32_unchanged
// CHECK: arith.addf
// CHECK-NOT: arith.addi
func.func @add_f32_unchanged(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %z = "nn.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @compare_i64_signed
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i64
func.func @compare_i64_signed(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi1> {
  %z = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %z : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @select_i64
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i64
func.func @select_i64(%c: tensor<4xi1>, %x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {
  %z = "nn.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %z : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK: arith.fptosi %{{.+}} : f32 to i64
// CHECK: arith.sitofp %{{.+}} : i64 to f16
// CHECK: arith.trunci %{{.+}} : i64 to i32
// CHECK: arith.extui %{{.+}} : i1 to i64
// CHECK: arith.cmpi ne, %{{.+}}, %{{.+}} : i32
func.func @casts(%f: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf16>, tensor<4xi64>, tensor<4xi1>) {
  %i = "nn.cast"(%f) : (tensor<4xf32>) -> tensor<4xi64>
  %h = "nn.cast"(%i) : (tensor<4xi64>) -> tensor<4xf16>
  %n = "nn.cast"(%i) : (tensor<4xi64>) -> tensor<4xi32>
  %e = "nn.cast"(%b) : (tensor<4xi1>) -> tensor<4xi64>
  %z = "nn.cast"(%n) : (tensor<4xi32>) -> tensor<4xi1>
  return %h, %e, %z : tensor<4xf16>, tensor<4xi64>, tensor<4xi1>
}

// -----

// Unsigned integers are cast as the signless ones of their bits: zero
// extension, unsigned conversions to and from floats, and no ui type left.
// CHECK-LABEL: func.func @unsigned_casts
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xf32>, %{{.+}}: tensor<4xi64>)
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.uitofp %{{.+}} : i8 to f32
// CHECK: arith.fptoui %{{.+}} : f32 to i16
// CHECK: arith.extsi %{{.+}} : i8 to i16
// CHECK: arith.uitofp %{{.+}} : i64 to f32
// CHECK-NEXT: arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT: ui
func.func @unsigned_casts(%u: tensor<4xui8>, %f: tensor<4xf32>, %w: tensor<4xui64>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xui16>, tensor<4xui16>, tensor<4xf16>, tensor<4xi64>) {
  %a = "nn.cast"(%u) : (tensor<4xui8>) -> tensor<4xi32>
  %b = "nn.cast"(%u) : (tensor<4xui8>) -> tensor<4xf32>
  %c = "nn.cast"(%f) : (tensor<4xf32>) -> tensor<4xui16>
  %s = "nn.cast"(%a) : (tensor<4xi32>) -> tensor<4xi8>
  %d = "nn.cast"(%s) : (tensor<4xi8>) -> tensor<4xui16>
  %e = "nn.cast"(%w) : (tensor<4xui64>) -> tensor<4xf16>
  %g = "nn.cast"(%w) : (tensor<4xui64>) -> tensor<4xi64>
  return %a, %b, %c, %d, %e, %g : tensor<4xi32>, tensor<4xf32>, tensor<4xui16>, tensor<4xui16>, tensor<4xf16>, tensor<4xi64>
}

// -----

// f64 elementwise ops compute in f64, their constants of f64; a cast from
// f64 to f16 goes through the f32 rounded to odd.
// CHECK-LABEL: func.func @f64_elementwise
// CHECK: arith.constant 1.000000e+00 : f64
// CHECK: math.exp %{{.+}} : f64
// CHECK: %[[ROUNDED:.+]] = arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[BITS:.+]] = arith.bitcast %[[ROUNDED]] : f32 to i32
// CHECK: %[[ODD:.+]] = arith.select %{{.+}}, %{{.+}}, %[[BITS]] : i32
// CHECK: %[[F32:.+]] = arith.bitcast %[[ODD]] : i32 to f32
// CHECK: arith.truncf %[[F32]] : f32 to f16
func.func @f64_elementwise(%x: tensor<4xf64>) -> tensor<4xf16> {
  %s = "nn.sigmoid"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %h = "nn.cast"(%s) : (tensor<4xf64>) -> tensor<4xf16>
  return %h : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @reductions_i64
// CHECK: linalg.fill ins(%c0_i64 : i64)
// CHECK: arith.addi
// CHECK: arith.constant -9223372036854775808 : i64
// CHECK: linalg.fill ins(%c-9223372036854775808_i64 : i64)
// CHECK: arith.maxsi
// CHECK-NOT: f32
func.func @reductions_i64(%x: tensor<2x8xi64>) -> (tensor<2xi64>, tensor<8xi64>) {
  %s = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x8xi64>) -> tensor<2xi64>
  %m = "nn.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x8xi64>) -> tensor<8xi64>
  return %s, %m : tensor<2xi64>, tensor<8xi64>
}

// -----

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.+]]: tensor<10x4xf32>, %[[IDS:.+]]: tensor<2x3xi64>)
// CHECK: linalg.generic {{.+}} ins(%[[IDS]] : tensor<2x3xi64>) outs(%{{.+}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[ID:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[LOW:.+]] = arith.maxsi %[[ID]], %{{.+}} : i64
// CHECK: %[[CLAMPED:.+]] = arith.minsi %[[LOW]], %{{.+}} : i64
// CHECK-DAG: %[[COLUMN:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[ROW:.+]] = arith.index_cast %[[CLAMPED]] : i64 to index
// CHECK: tensor.extract %[[TABLE]][%[[ROW]], %[[COLUMN]]] : tensor<10x4xf32>
func.func @embedding(%table: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %y = "nn.gather"(%table, %ids) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @gather_inner_axis
// CHECK-DAG: %[[I:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[K:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: tensor.extract %{{.+}}[%[[I]], %[[K]]] : tensor<3x5xi64>
func.func @gather_inner_axis(%x: tensor<3x5xi64>, %i: tensor<2xi32>) -> tensor<3x2xi64> {
  %y = "nn.gather"(%x, %i) {axis = 1 : i64} : (tensor<3x5xi64>, tensor<2xi32>) -> tensor<3x2xi64>
  return %y : tensor<3x2xi64>
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<4x8xf32>)
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[I64:.+]] = arith.index_cast %[[J]] : index to i64
// CHECK: arith.sitofp %[[I64]] : i64 to f32
func.func @iota() -> tensor<4x8xf32> {
  %y = "nn.iota"() {axis = 1 : i64} : () -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @cumsum
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-DAG: %[[J:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[REACHED:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: arith.select %[[REACHED]], %{{.+}}, %{{.+}} : i64
// CHECK: arith.addi
func.func @cumsum(%x: tensor<2x8xi64>) -> tensor<2x8xi64> {
  %y = "nn.cumsum"(%x) {axis = 1 : i64} : (tensor<2x8xi64>) -> tensor<2x8xi64>
  return %y : tensor<2x8xi64>
}

// -----

// CHECK-LABEL: func.func @argmax
// CHECK: arith.maximumf
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf uno
// CHECK: linalg.index 1 : index
// CHECK: arith.minsi
// CHECK: tensor.expand_shape {{.+}} into tensor<2x1xi64>
func.func @argmax(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  %y = "nn.argmax"(%x) {axis = 1 : i64, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xi64>
  return %y : tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @sin_cos
// CHECK: math.sin
// CHECK: math.cos
func.func @sin_cos(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = "nn.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "nn.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %s, %c : tensor<4xf32>, tensor<4xf32>
}

// -----

// i8 x i8 matmuls accumulate in i32 from an i32 zero: linalg's named ops
// sign-extend i8 operands to their i32 output (arith.extsi once generalised).
// CHECK-LABEL: func.func @matmul_i8
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<5x3xi32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<5x7xi8>, tensor<7x3xi8>) outs(%[[ACC]] : tensor<5x3xi32>)
// CHECK-NOT: arith.sitofp
// CHECK-NOT: linalg.generic
func.func @matmul_i8(%a: tensor<5x7xi8>, %b: tensor<7x3xi8>) -> tensor<5x3xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<5x7xi8>, tensor<7x3xi8>) -> tensor<5x3xi32>
  return %c : tensor<5x3xi32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul_i8
// CHECK: linalg.fill ins(%{{.+}} : i32)
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<2x4x9xi8>, tensor<2x9x6xi8>) outs(%{{.+}} : tensor<2x4x6xi32>)
// CHECK-NOT: arith.sitofp
func.func @batch_matmul_i8(%a: tensor<2x4x9xi8>, %b: tensor<2x9x6xi8>) -> tensor<2x4x6xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<2x4x9xi8>, tensor<2x9x6xi8>) -> tensor<2x4x6xi32>
  return %c : tensor<2x4x6xi32>
}

// -----

// A ui8 x i8 matmul is a generic of zext(a) * sext(b) (linalg's named
// matmuls extend both operands alike), batched ones too.
// CHECK-LABEL: func.func @matmul_ui8_by_i8
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x9xi8>, %[[B:.+]]: tensor<2x9x6xi8>)
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<2x4x6xi32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<2x4x9xi8>, tensor<2x9x6xi8>) outs(%[[ACC]] : tensor<2x4x6xi32>)
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
func.func @matmul_ui8_by_i8(%a: tensor<2x4x9xui8>, %b: tensor<2x9x6xi8>) -> tensor<2x4x6xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<2x4x9xui8>, tensor<2x9x6xi8>) -> tensor<2x4x6xi32>
  return %c : tensor<2x4x6xi32>
}

// -----

// i8 convolutions accumulate in i32 in linalg's named convolution.
// CHECK-LABEL: func.func @conv2d_i8
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<1x4x6x6xi32>)
// CHECK: linalg.conv_2d_nchw_fchw {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>) outs(%[[ACC]] : tensor<1x4x6x6xi32>)
// CHECK-NOT: arith.sitofp
func.func @conv2d_i8(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>) -> tensor<1x4x6x6xi32> {
  %y = "nn.conv2d"(%x, %w) : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>) -> tensor<1x4x6x6xi32>
  return %y : tensor<1x4x6x6xi32>
}

// -----

// A ui8 x i8 convolution computes on the activations less 128 as i8,
// padded with -128 (a ui8 zero less 128), and adds 128 times each filter's
// sum back.
// CHECK-LABEL: func.func @conv2d_ui8_by_i8
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xi8>, %[[W:.+]]: tensor<4x3x3x3xi8>)
// CHECK: %[[SHIFTED:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<1x3x8x8xi8>)
// CHECK: %[[MINUS:.+]] = arith.constant -128 : i8
// CHECK: arith.addi %{{.+}}, %[[MINUS]] : i8
// CHECK: %[[PADDED:.+]] = tensor.pad %[[SHIFTED]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[FILL:.+]] = arith.constant -128 : i8
// CHECK: tensor.yield %[[FILL]] : i8
// CHECK: %[[ACC:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[PADDED]], %[[W]] : tensor<1x3x10x10xi8>, tensor<4x3x3x3xi8>)
// CHECK: %[[SUMS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%[[W]] : tensor<4x3x3x3xi8>) outs(%{{.+}} : tensor<4xi32>)
// CHECK: %[[SHIFT:.+]] = arith.constant 128 : i32
// CHECK: arith.muli %{{.+}}, %[[SHIFT]] : i32
// CHECK: linalg.generic {{.+}} ins(%[[ACC]], %[[SUMS]] : tensor<1x4x8x8xi32>, tensor<4xi32>)
// CHECK: arith.addi
func.func @conv2d_ui8_by_i8(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>) -> tensor<1x4x8x8xi32> {
  %y = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>) -> tensor<1x4x8x8xi32>
  return %y : tensor<1x4x8x8xi32>
}

// -----

// A ui8 pad value is stored as the i8 of the same bits (200 as -56).
// CHECK-LABEL: func.func @pad_ui8
// CHECK: tensor.pad
// CHECK: %[[FILL:.+]] = arith.constant -56 : i8
// CHECK: tensor.yield %[[FILL]] : i8
func.func @pad_ui8(%x: tensor<2x3xui8>) -> tensor<2x5xui8> {
  %y = "nn.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 1>, value = 200.0 : f32} : (tensor<2x3xui8>) -> tensor<2x5xui8>
  return %y : tensor<2x5xui8>
}

// -----

// Shifts clamp their amount, which arith's shifts leave poison past the
// width: unsigned below the width, else 0 to the left and the sign's
// copies (a shift by width - 1) to the right.
// CHECK-LABEL: func.func @bits
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: arith.ori %{{.+}}, %{{.+}} : i32
// CHECK: arith.xori %{{.+}}, %{{.+}} : i32
// CHECK: %[[WIDTH:.+]] = arith.constant 32 : i32
// CHECK: %[[INSIDE:.+]] = arith.cmpi ult, %{{.+}}, %[[WIDTH]] : i32
// CHECK: %[[SHIFTED:.+]] = arith.shli
// CHECK: arith.select %[[INSIDE]], %[[SHIFTED]], %{{.+}} : i32
// CHECK: arith.cmpi ult
// CHECK: arith.shrsi
// CHECK: arith.remf %{{.+}}, %{{.+}} : f32
func.func @bits(%a: tensor<4xi32>, %n: tensor<4xi32>, %h: tensor<4xf16>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf16>) {
  %0 = "nn.bitwise_and"(%a, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "nn.bitwise_or"(%0, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = "nn.bitwise_xor"(%1, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = "nn.shift_left"(%2, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = "nn.shift_right"(%3, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %5 = "nn.remainder"(%h, %h) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xf16>
}
