// nn.quantize and nn.dequantize in convert-nn-to-linalg: one linalg.generic
// each, the scale and zero point read per tensor (a map to no dims) or per
// channel (a map to the axis); quantize divides, rounds half to even
// (math.roundeven), adds the zero point and saturates in f32 (maxnumf
// first, so that NaN gives the least value) before converting; ui8 values
// are stored as i8 (function arguments and results, constants) and widen
// with extui, i8 with extsi.
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[NONE:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @quantize_i8_per_tensor
// CHECK-SAME: -> tensor<4x8xi8>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[NONE]], #[[NONE]], #[[ID]]]
// CHECK: ^bb0(%[[X:.+]]: f32, %[[S:.+]]: f32, %[[Z:.+]]: i8, %{{.+}}: i8):
// CHECK: %[[ZW:.+]] = arith.extsi %[[Z]] : i8 to i32
// CHECK: %[[ZF:.+]] = arith.sitofp %[[ZW]] : i32 to f32
// CHECK: %[[Q:.+]] = arith.divf %[[X]], %[[S]] : f32
// CHECK: %[[R:.+]] = math.roundeven %[[Q]] : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[R]], %[[ZF]] : f32
// CHECK: %[[LOW:.+]] = arith.constant -1.280000e+02 : f32
// CHECK: %[[MAX:.+]] = arith.maxnumf %[[SUM]], %[[LOW]] : f32
// CHECK: %[[HIGH:.+]] = arith.constant 1.270000e+02 : f32
// CHECK: %[[MIN:.+]] = arith.minnumf %[[MAX]], %[[HIGH]] : f32
// CHECK: %[[I:.+]] = arith.fptosi %[[MIN]] : f32 to i32
// CHECK: %[[T:.+]] = arith.trunci %[[I]] : i32 to i8
// CHECK: linalg.yield %[[T]] : i8
// CHECK-NOT: nn.quantize
func.func @quantize_i8_per_tensor(%x: tensor<4x8xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xi8> {
  %q = "nn.quantize"(%x, %s, %z) : (tensor<4x8xf32>, tensor<f32>, tensor<i8>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CHANNEL:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @quantize_ui8_per_channel
// CHECK-SAME: (%{{.+}}: tensor<2x3x4xf32>, %{{.+}}: tensor<3xf32>, %{{.+}}: tensor<3xi8>) -> tensor<2x3x4xi8>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CHANNEL]], #[[CHANNEL]], #[[ID]]]
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: arith.constant 2.550000e+02 : f32
// CHECK-NOT: ui8
// CHECK-NOT: unrealized_conversion_cast
func.func @quantize_ui8_per_channel(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> tensor<2x3x4xui8> {
  %q = "nn.quantize"(%x, %s, %z) : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3x4xui8>
  return %q : tensor<2x3x4xui8>
}

// -----

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @dequantize_i8_per_channel_axis_0
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]]
// CHECK: ^bb0(%[[Q:.+]]: i8, %[[S:.+]]: f32, %[[Z:.+]]: i8, %{{.+}}: f32):
// CHECK: %[[QW:.+]] = arith.extsi %[[Q]] : i8 to i32
// CHECK: %[[ZW:.+]] = arith.extsi %[[Z]] : i8 to i32
// CHECK: %[[D:.+]] = arith.subi %[[QW]], %[[ZW]] : i32
// CHECK: %[[F:.+]] = arith.sitofp %[[D]] : i32 to f32
// CHECK: %[[Y:.+]] = arith.mulf %[[F]], %[[S]] : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @dequantize_i8_per_channel_axis_0(%q: tensor<4x8xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<4x8xf32> {
  %y = "nn.dequantize"(%q, %s, %z) {axis = 0 : i64} : (tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A ui8 constant keeps its bits as i8 (200 is -56).
// CHECK-LABEL: func.func @dequantize_ui8_constant
// CHECK-SAME: (%[[Q:.+]]: tensor<4xi8>)
// CHECK: %[[Z:.+]] = arith.constant dense<-56> : tensor<i8>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Q]], %{{.+}}, %[[Z]] : tensor<4xi8>, tensor<f32>, tensor<i8>)
// CHECK: arith.extui
// CHECK: arith.extui
// CHECK-NOT: arith.extsi
// CHECK-NOT: ui8
func.func @dequantize_ui8_constant(%q: tensor<4xui8>) -> tensor<4xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<200> : tensor<ui8>
  %y = "nn.dequantize"(%q, %s, %z) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Other functions keep their types.
// CHECK-LABEL: func.func @no_quantization
// CHECK-SAME: (%{{.+}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK-NOT: linalg.generic
// CHECK-NOT: unrealized_conversion_cast
func.func @no_quantization(%x: tensor<4xi8>) -> tensor<4xi8> {
  return %x : tensor<4xi8>
}
