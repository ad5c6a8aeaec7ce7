// RUN: lamina-opt %s --split-input-file --nn-fuse-qdq | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-fuse-qdq --nn-fold-constants | FileCheck %s --check-prefix=FOLD

// A per-tensor activation and a per-column weight: an i8 x i8 -> i32
// matmul, the weight's zero points times the activation's row sums, the
// activation's zero point times the weight's column sums, K * za * zw,
// and the requantisation by (sa * sw) / sy.
// CHECK-LABEL: func.func @per_column_weight
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-DAG: %[[W:.+]] = arith.constant dense<2> : tensor<8x3xi8>
// CHECK-DAG: %[[SA:.+]] = arith.constant dense<5.000000e-02> : tensor<f32>
// CHECK-DAG: %[[SW:.+]] = arith.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// CHECK-DAG: %[[SY:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[ZY:.+]] = arith.constant dense<-2> : tensor<i8>
// CHECK: %[[A:.+]] = "nn.quantize"(%[[X]]
// CHECK: %[[ACC:.+]] = "nn.matmul"(%[[A]], %[[W]]) : (tensor<4x8xi8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// CHECK: %[[ONES_K:.+]] = arith.constant dense<1> : tensor<8x1xi8>
// CHECK: %[[ROWS:.+]] = "nn.matmul"(%[[A]], %[[ONES_K]]) : (tensor<4x8xi8>, tensor<8x1xi8>) -> tensor<4x1xi32>
// CHECK: %[[ZW:.+]] = arith.constant dense<[0, 1, -1]> : tensor<3xi32>
// CHECK: %[[ROW_TERM:.+]] = "nn.mul"(%[[ROWS]], %[[ZW]])
// CHECK: %[[ACC1:.+]] = "nn.sub"(%[[ACC]], %[[ROW_TERM]])
// CHECK: %[[ONES:.+]] = arith.constant dense<1> : tensor<1x8xi8>
// CHECK: %[[COLUMNS:.+]] = "nn.matmul"(%[[ONES]], %[[W]]) : (tensor<1x8xi8>, tensor<8x3xi8>) -> tensor<1x3xi32>
// CHECK: %[[ZA:.+]] = arith.constant dense<3> : tensor<i32>
// CHECK: %[[COLUMN_TERM:.+]] = "nn.mul"(%[[COLUMNS]], %[[ZA]])
// CHECK: %[[ACC2:.+]] = "nn.sub"(%[[ACC1]], %[[COLUMN_TERM]])
// CHECK: %[[KZZ:.+]] = arith.constant dense<[0, 24, -24]> : tensor<3xi32>
// CHECK: %[[ACC3:.+]] = "nn.add"(%[[ACC2]], %[[KZZ]])
// CHECK: %[[SASW:.+]] = "nn.mul"(%[[SA]], %[[SW]])
// CHECK: %[[M:.+]] = "nn.div"(%[[SASW]], %[[SY]])
// CHECK: %[[REAL:.+]] = "nn.cast"(%[[ACC3]]) : (tensor<4x3xi32>) -> tensor<4x3xf32>
// CHECK: %[[SCALED:.+]] = "nn.mul"(%[[REAL]], %[[M]])
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[Q:.+]] = "nn.quantize"(%[[SCALED]], %[[ONE]], %[[ZY]])
// CHECK: return %[[Q]] : tensor<4x3xi8>
// CHECK-NOT: nn.dequantize
// With constant weights, their column sums, the zero-point terms and the
// combined scale are constants.
// FOLD-LABEL: func.func @per_column_weight
// FOLD: "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<4x8xi8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// FOLD: "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<4x8xi8>, tensor<8x1xi8>) -> tensor<4x1xi32>
// FOLD-NOT: tensor<1x8xi8>
// FOLD: arith.constant dense<48> : tensor<1x3xi32>
// FOLD: arith.constant dense<[0.0100000007, 0.0200000014, 0.0300000012]> : tensor<3xf32>
// FOLD-NOT: "nn.div"
func.func @per_column_weight(%x: tensor<4x8xf32>) -> tensor<4x3xi8> {
  %sa = arith.constant dense<0.05> : tensor<f32>
  %za = arith.constant dense<3> : tensor<i8>
  %w = arith.constant dense<2> : tensor<8x3xi8>
  %sw = arith.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %zw = arith.constant dense<[0, 1, -1]> : tensor<3xi8>
  %sy = arith.constant dense<0.5> : tensor<f32>
  %zy = arith.constant dense<-2> : tensor<i8>
  %q = "nn.quantize"(%x, %sa, %za) : (tensor<4x8xf32>, tensor<f32>, tensor<i8>) -> tensor<4x8xi8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) : (tensor<8x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<8x3xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = "nn.quantize"(%y, %sy, %zy) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %r : tensor<4x3xi8>
}

// -----

// Zero points of zero add no terms. A ui8 activation stays ui8: the
// integer matmul is ui8 x i8 (vpdpbusd's own form), with no shift.
// CHECK-LABEL: func.func @uint8_activation_symmetric_weight
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x16xf32>, %[[W:.+]]: tensor<16x5xi8>)
// CHECK: %[[A:.+]] = "nn.quantize"(%[[X]], %{{.+}}, %{{.+}}) : (tensor<2x4x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x16xui8>
// CHECK: %[[ACC:.+]] = "nn.matmul"(%[[A]], %[[W]]) : (tensor<2x4x16xui8>, tensor<16x5xi8>) -> tensor<2x4x5xi32>
// CHECK-NOT: tensor<16x1xi8>
// CHECK: "nn.matmul"(%{{.+}}, %[[W]]) : (tensor<1x16xi8>, tensor<16x5xi8>) -> tensor<1x5xi32>
// CHECK: arith.constant dense<200> : tensor<i32>
// CHECK-NOT: "nn.add"
// CHECK: "nn.quantize"(%{{.+}}) : (tensor<2x4x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x5xui8>
func.func @uint8_activation_symmetric_weight(%x: tensor<2x4x16xf32>, %w: tensor<16x5xi8>) -> tensor<2x4x5xui8> {
  %sa = arith.constant dense<0.1> : tensor<f32>
  %za = arith.constant dense<200> : tensor<ui8>
  %sw = arith.constant dense<0.02> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %sy = arith.constant dense<0.25> : tensor<f32>
  %zy = arith.constant dense<128> : tensor<ui8>
  %q = "nn.quantize"(%x, %sa, %za) : (tensor<2x4x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x16xui8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<2x4x16xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x16xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) : (tensor<16x5xi8>, tensor<f32>, tensor<i8>) -> tensor<16x5xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<2x4x16xf32>, tensor<16x5xf32>) -> tensor<2x4x5xf32>
  %r = "nn.quantize"(%y, %sy, %zy) : (tensor<2x4x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x5xui8>
  return %r : tensor<2x4x5xui8>
}

// -----

// A float weight quantised in the program (as some exporters write it):
// with nn-fold-constants its quantised values are an i8 constant too.
// CHECK-LABEL: func.func @weight_quantized_in_the_program
// CHECK: %[[WQ:.+]] = "nn.quantize"
// CHECK: "nn.matmul"(%{{.+}}, %[[WQ]]) : (tensor<2x4xi8>, tensor<4x2xi8>) -> tensor<2x2xi32>
// FOLD-LABEL: func.func @weight_quantized_in_the_program
// FOLD: %[[W:.+]] = arith.constant dense<{{\[}}[4, -4], [8, -8], [12, -12], [16, -16]]> : tensor<4x2xi8>
// FOLD-NOT: "nn.quantize"
// FOLD: "nn.matmul"(%{{.+}}, %[[W]]) : (tensor<2x4xi8>, tensor<4x2xi8>) -> tensor<2x2xi32>
func.func @weight_quantized_in_the_program(%qa: tensor<2x4xi8>) -> tensor<2x2xi8> {
  %s = arith.constant dense<0.25> : tensor<f32>
  %z = arith.constant dense<0> : tensor<i8>
  %w = arith.constant dense<[[1.0, -1.0], [2.0, -2.0], [3.0, -3.0], [4.0, -4.0]]> : tensor<4x2xf32>
  %wq = "nn.quantize"(%w, %s, %z) : (tensor<4x2xf32>, tensor<f32>, tensor<i8>) -> tensor<4x2xi8>
  %a = "nn.dequantize"(%qa, %s, %z) : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %wf = "nn.dequantize"(%wq, %s, %z) : (tensor<4x2xi8>, tensor<f32>, tensor<i8>) -> tensor<4x2xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  %r = "nn.quantize"(%y, %s, %z) : (tensor<2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  return %r : tensor<2x2xi8>
}

// -----

// A ui8 activation from an argument is the matmul's operand itself; a ui8
// weight goes through an exact dequantise and quantise by scale 1 (less
// 128) into i8, its zero point less 128 (1 - 128 = -127).
// CHECK-LABEL: func.func @uint8_argument
// CHECK-SAME: (%[[Q:.+]]: tensor<4x8xui8>, %[[W:.+]]: tensor<8x3xui8>)
// CHECK: %[[MINUS:.+]] = "nn.dequantize"(%[[W]], %[[ONE:.+]], %{{.+}}) : (tensor<8x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<8x3xf32>
// CHECK: %[[W8:.+]] = "nn.quantize"(%[[MINUS]], %[[ONE]], %{{.+}}) : (tensor<8x3xf32>, tensor<f32>, tensor<i8>) -> tensor<8x3xi8>
// CHECK: "nn.matmul"(%[[Q]], %[[W8]]) : (tensor<4x8xui8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// CHECK: "nn.matmul"(%[[Q]], %{{.+}}) : (tensor<4x8xui8>, tensor<8x1xi8>) -> tensor<4x1xi32>
// CHECK: arith.constant dense<-127> : tensor<i32>
func.func @uint8_argument(%q: tensor<4x8xui8>, %w: tensor<8x3xui8>) -> tensor<4x3xi8> {
  %sa = arith.constant dense<0.1> : tensor<f32>
  %za = arith.constant dense<130> : tensor<ui8>
  %sw = arith.constant dense<0.02> : tensor<f32>
  %zw = arith.constant dense<1> : tensor<ui8>
  %sy = arith.constant dense<0.25> : tensor<f32>
  %zy = arith.constant dense<0> : tensor<i8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) : (tensor<8x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<8x3xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = "nn.quantize"(%y, %sy, %zy) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %r : tensor<4x3xi8>
}

// -----

// A QDQ convolution with a bias and a relu: the padding holds the
// activation's zero point (nn.pad), so that its term is each filter's sum
// (the convolution of one window of ones); the weight's zero points per
// output channel times the window sums of the activation; taps * za * zw;
// the bias divided by the output scale is added after the rescaling, then
// the relu, then the rounding.
// CHECK-LABEL: func.func @conv_per_channel
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x4xui8>)
// CHECK-DAG: %[[W:.+]] = arith.constant dense<2> : tensor<3x2x3x3xi8>
// CHECK: %[[PADDED:.+]] = "nn.pad"(%[[Q]]) {high = array<i64: 0, 0, 1, 1>, low = array<i64: 0, 0, 1, 1>, value = 1.000000e+01 : f32} : (tensor<1x2x4x4xui8>) -> tensor<1x2x6x6xui8>
// CHECK: %[[ACC:.+]] = "nn.conv2d"(%[[PADDED]], %[[W]]) : (tensor<1x2x6x6xui8>, tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xi32>
// CHECK: %[[ONES:.+]] = arith.constant dense<1> : tensor<1x2x3x3xi8>
// CHECK: %[[WINDOWS:.+]] = "nn.conv2d"(%[[PADDED]], %[[ONES]]) : (tensor<1x2x6x6xui8>, tensor<1x2x3x3xi8>) -> tensor<1x1x4x4xi32>
// CHECK: %[[ZW:.+]] = arith.constant dense<{{\[\[\[}}0]], {{\[\[}}1]], {{\[\[}}-1]]]> : tensor<3x1x1xi32>
// CHECK: "nn.mul"(%[[WINDOWS]], %[[ZW]])
// CHECK: %[[WINDOW:.+]] = arith.constant dense<1> : tensor<1x2x3x3xi8>
// CHECK: %[[SUMS:.+]] = "nn.conv2d"(%[[WINDOW]], %[[W]]) : (tensor<1x2x3x3xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x1x1xi32>
// CHECK: "nn.mul"(%[[SUMS]], %{{.+}}) : (tensor<1x3x1x1xi32>, tensor<i32>)
// CHECK: arith.constant dense<{{\[\[\[}}0]], {{\[\[}}180]], {{\[\[}}-180]]]> : tensor<3x1x1xi32>
// CHECK: "nn.reshape"(%{{.+}}) : (tensor<3xf32>) -> tensor<3x1x1xf32>
// CHECK: "nn.div"(%{{.+}}, %{{.+}}) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[BIASED:.+]] = "nn.add"
// CHECK: %[[RELU:.+]] = "nn.relu"(%[[BIASED]])
// CHECK: "nn.quantize"(%[[RELU]], %{{.+}}, %{{.+}}) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
// CHECK-NOT: "nn.dequantize"
func.func @conv_per_channel(%q: tensor<1x2x4x4xui8>) -> tensor<1x3x4x4xui8> {
  %sa = arith.constant dense<0.05> : tensor<f32>
  %za = arith.constant dense<10> : tensor<ui8>
  %w = arith.constant dense<2> : tensor<3x2x3x3xi8>
  %sw = arith.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %zw = arith.constant dense<[0, 1, -1]> : tensor<3xi8>
  %b = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %sy = arith.constant dense<0.5> : tensor<f32>
  %zy = arith.constant dense<0> : tensor<ui8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) {axis = 0 : i64} : (tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2x3x3xf32>
  %y = "nn.conv2d"(%a, %wf, %b) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %r = "nn.relu"(%y) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %o = "nn.quantize"(%r, %sy, %zy) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  return %o : tensor<1x3x4x4xui8>
}

// -----

// A symmetric activation (zero point 0) keeps the convolution's padding.
// CHECK-LABEL: func.func @conv_symmetric
// CHECK-NOT: "nn.pad"
// CHECK: "nn.conv2d"(%{{.+}}, %{{.+}}) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xi32>
// CHECK-NOT: "nn.conv2d"
func.func @conv_symmetric(%q: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xi8> {
  %s = arith.constant dense<0.05> : tensor<f32>
  %z = arith.constant dense<0> : tensor<i8>
  %a = "nn.dequantize"(%q, %s, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %wf = "nn.dequantize"(%w, %s, %z) : (tensor<3x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<3x2x3x3xf32>
  %y = "nn.conv2d"(%a, %wf) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %o = "nn.quantize"(%y, %s, %z) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
  return %o : tensor<1x3x4x4xi8>
}

// -----

// Left alone: the float convolution is used elsewhere; the weight is
// quantised along another axis than its output channels.
// CHECK-LABEL: func.func @conv_not_fused
// CHECK-COUNT-2: "nn.conv2d"(%{{.+}}, %{{.+}}) {{.*}}: (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NOT: xi32>
func.func @conv_not_fused(%q: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) -> (tensor<1x3x2x2xi8>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xi8>) {
  %s = arith.constant dense<0.05> : tensor<f32>
  %z = arith.constant dense<0> : tensor<i8>
  %s2 = arith.constant dense<0.05> : tensor<2xf32>
  %z2 = arith.constant dense<0> : tensor<2xi8>
  %a = "nn.dequantize"(%q, %s, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %wf = "nn.dequantize"(%w, %s, %z) : (tensor<3x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<3x2x3x3xf32>
  %y = "nn.conv2d"(%a, %wf) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  %o = "nn.quantize"(%y, %s, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2x2xi8>
  %wc = "nn.dequantize"(%w, %s2, %z2) {axis = 1 : i64} : (tensor<3x2x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<3x2x3x3xf32>
  %yc = "nn.conv2d"(%a, %wc) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  %oc = "nn.quantize"(%yc, %s, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2x2xi8>
  return %o, %y, %oc : tensor<1x3x2x2xi8>, tensor<1x3x2x2xf32>, tensor<1x3x2x2xi8>
}

// -----

// A product also used as a float: the quantisation is not rewritten, and
// the matmul takes the float form (the one i32 product, scaled).
// CHECK-LABEL: func.func @product_used_twice
// CHECK: %[[ACC:.+]] = "nn.matmul"(%arg0, %arg1) : (tensor<4x8xi8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// CHECK: %[[REAL:.+]] = "nn.cast"(%[[ACC]]) : (tensor<4x3xi32>) -> tensor<4x3xf32>
// CHECK: %[[Y:.+]] = "nn.mul"(%[[REAL]], %{{.+}}) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: %[[Q:.+]] = "nn.quantize"(%[[Y]], %{{.+}}, %{{.+}})
// CHECK: return %[[Q]], %[[Y]]
// CHECK-NOT: tensor<8x3xf32>
func.func @product_used_twice(%qa: tensor<4x8xi8>, %w: tensor<8x3xi8>) -> (tensor<4x3xi8>, tensor<4x3xf32>) {
  %s = arith.constant dense<0.1> : tensor<f32>
  %z = arith.constant dense<0> : tensor<i8>
  %a = "nn.dequantize"(%qa, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  %wf = "nn.dequantize"(%w, %s, %z) : (tensor<8x3xi8>, tensor<f32>, tensor<i8>) -> tensor<8x3xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = "nn.quantize"(%y, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %r, %y : tensor<4x3xi8>, tensor<4x3xf32>
}

// -----

// PyTorch 2 export's form (nn.Linear, from_torch): the weight stored [N, K]
// per output channel and transposed, a bias and a relu before the
// quantisation, which is by scale 1 of the product by 1/scale. The weight
// is transposed as i8; the bias and the combined scale are multiplied by
// that factor instead of divided by a scale.
// CHECK-LABEL: func.func @linear_bias_relu
// CHECK: %[[WT:.+]] = "nn.transpose"(%arg1) {perm = array<i64: 1, 0>} : (tensor<3x8xi8>) -> tensor<8x3xi8>
// CHECK: %[[ACC:.+]] = "nn.matmul"(%arg0, %[[WT]]) : (tensor<4x8xui8>, tensor<8x3xi8>) -> tensor<4x3xi32>
// CHECK: %[[SCALES:.+]] = "nn.mul"(%{{.+}}, %{{.+}}) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[MULTIPLIER:.+]] = "nn.mul"(%[[SCALES]], %[[FACTOR:.+]]) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[SHIFT:.+]] = "nn.mul"(%arg2, %[[FACTOR]]) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: %[[REAL:.+]] = "nn.cast"(%{{.+}}) : (tensor<4x3xi32>) -> tensor<4x3xf32>
// CHECK: %[[SCALED:.+]] = "nn.mul"(%[[REAL]], %[[MULTIPLIER]])
// CHECK: %[[SHIFTED:.+]] = "nn.add"(%[[SCALED]], %[[SHIFT]])
// CHECK: %[[RELU:.+]] = "nn.relu"(%[[SHIFTED]])
// CHECK: "nn.quantize"(%[[RELU]], %{{.+}}, %{{.+}}) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
// CHECK-NOT: "nn.dequantize"
// CHECK-NOT: xf32>) -> tensor<4x3xf32>
func.func @linear_bias_relu(%qa: tensor<4x8xui8>, %w: tensor<3x8xi8>, %b: tensor<3xf32>) -> tensor<4x3xui8> {
  %sa = arith.constant dense<0.02> : tensor<f32>
  %za = arith.constant dense<128> : tensor<ui8>
  %sw = arith.constant dense<[0.01, 0.02, 0.03]> : tensor<3xf32>
  %zw = arith.constant dense<0> : tensor<3xi8>
  %inverse = arith.constant dense<20.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zy = arith.constant dense<0> : tensor<ui8>
  %a = "nn.dequantize"(%qa, %sa, %za) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) {axis = 0 : i64} : (tensor<3x8xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x8xf32>
  %wt = "nn.transpose"(%wf) {perm = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32>
  %y = "nn.matmul"(%a, %wt) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %biased = "nn.add"(%y, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = "nn.relu"(%biased) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %scaled = "nn.mul"(%r, %inverse) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %q = "nn.quantize"(%scaled, %one, %zy) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return %q : tensor<4x3xui8>
}

// -----

// A last layer, its float result returned: the i32 product scaled by
// sa * sw (ONNX Runtime's MatMulIntegerToFloat), the bias added after.
// CHECK-LABEL: func.func @float_result
// CHECK: %[[ACC:.+]] = "nn.matmul"(%arg0, %{{.+}}) : (tensor<2x8xui8>, tensor<8x5xi8>) -> tensor<2x5xi32>
// CHECK: %[[REAL:.+]] = "nn.cast"(%[[ACC]]) : (tensor<2x5xi32>) -> tensor<2x5xf32>
// CHECK: %[[Y:.+]] = "nn.mul"(%[[REAL]], %{{.+}}) : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// CHECK: %[[OUT:.+]] = "nn.add"(%[[Y]], %arg2)
// CHECK: return %[[OUT]]
func.func @float_result(%qa: tensor<2x8xui8>, %w: tensor<5x8xi8>, %b: tensor<5xf32>) -> tensor<2x5xf32> {
  %sa = arith.constant dense<0.02> : tensor<f32>
  %za = arith.constant dense<0> : tensor<ui8>
  %sw = arith.constant dense<0.01> : tensor<5xf32>
  %zw = arith.constant dense<0> : tensor<5xi8>
  %a = "nn.dequantize"(%qa, %sa, %za) : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) {axis = 0 : i64} : (tensor<5x8xi8>, tensor<5xf32>, tensor<5xi8>) -> tensor<5x8xf32>
  %wt = "nn.transpose"(%wf) {perm = array<i64: 1, 0>} : (tensor<5x8xf32>) -> tensor<8x5xf32>
  %y = "nn.matmul"(%a, %wt) : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
  %out = "nn.add"(%y, %b) : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return %out : tensor<2x5xf32>
}

// -----

// Left alone: an activation quantised per channel (per row), with and
// without a bias, and a batched weight.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<{{.+}}xf32>, tensor<{{.+}}xf32>) -> tensor<{{.+}}xf32>
// CHECK-NOT: xi32>
func.func @not_fused(%qa: tensor<4x8xi8>, %w: tensor<8x3xi8>, %b: tensor<4x1xf32>, %wb: tensor<2x8x3xi8>) -> (tensor<4x3xi8>, tensor<4x3xi8>, tensor<2x4x3xf32>) {
  %s = arith.constant dense<0.1> : tensor<f32>
  %z = arith.constant dense<0> : tensor<i8>
  %sc = arith.constant dense<0.1> : tensor<4xf32>
  %zc = arith.constant dense<0> : tensor<4xi8>
  %ac = "nn.dequantize"(%qa, %sc, %zc) {axis = 0 : i64} : (tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x8xf32>
  %wf = "nn.dequantize"(%w, %s, %z) : (tensor<8x3xi8>, tensor<f32>, tensor<i8>) -> tensor<8x3xf32>
  %yc = "nn.matmul"(%ac, %wf) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %rc = "nn.quantize"(%yc, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  %yb = "nn.matmul"(%ac, %wf) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %biased = "nn.add"(%yb, %b) : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %rb = "nn.quantize"(%biased, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  %a = "nn.dequantize"(%qa, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  %wbf = "nn.dequantize"(%wb, %s, %z) : (tensor<2x8x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8x3xf32>
  %yw = "nn.matmul"(%a, %wbf) : (tensor<4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  return %rc, %rb, %yw : tensor<4x3xi8>, tensor<4x3xi8>, tensor<2x4x3xf32>
}
