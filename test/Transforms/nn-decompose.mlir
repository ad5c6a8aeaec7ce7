// RUN: lamina-opt %s --split-input-file --nn-decompose | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-decompose='keep-attention=false' | FileCheck %s --check-prefix=WHOLE

// A stable softmax: the row maximum is subtracted before exp, and the
// exponentials are multiplied by the reciprocal of their row sum (one
// division per row; keepdims, so that the row statistics broadcast back
// over their rows).

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK: %[[MAX:.+]] = "nn.reduce_max"(%[[X]]) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
// CHECK: %[[SHIFTED:.+]] = "nn.sub"(%[[X]], %[[MAX]])
// CHECK: %[[EXP:.+]] = "nn.exp"(%[[SHIFTED]])
// CHECK: %[[SUM:.+]] = "nn.reduce_sum"(%[[EXP]]) {axes = array<i64: 1>, keepdims = true}
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[RECIPROCAL:.+]] = "nn.div"(%[[ONE]], %[[SUM]]) : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
// CHECK: %[[Y:.+]] = "nn.mul"(%[[EXP]], %[[RECIPROCAL]])
// CHECK-NOT: "nn.softmax"
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The axis need not be the last one.

// CHECK-LABEL: func.func @softmax_axis_0
// CHECK: "nn.reduce_max"(%{{.+}}) {axes = array<i64: 0>, keepdims = true} : (tensor<3x5xf32>) -> tensor<1x5xf32>
// CHECK: "nn.reduce_sum"(%{{.+}}) {axes = array<i64: 0>, keepdims = true} : (tensor<3x5xf32>) -> tensor<1x5xf32>
func.func @softmax_axis_0(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %y = "nn.softmax"(%x) {axis = 0 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK: %[[MAX:.+]] = "nn.reduce_max"(%[[X]])
// CHECK: %[[SHIFTED:.+]] = "nn.sub"(%[[X]], %[[MAX]])
// CHECK: %[[EXP:.+]] = "nn.exp"(%[[SHIFTED]])
// CHECK: %[[SUM:.+]] = "nn.reduce_sum"(%[[EXP]])
// CHECK: %[[LOG:.+]] = "nn.log"(%[[SUM]])
// CHECK: %[[Y:.+]] = "nn.sub"(%[[SHIFTED]], %[[LOG]])
// CHECK: return %[[Y]]
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = "nn.log_softmax"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Two passes over each row: the mean, then the mean of the squared
// deviations from it. Epsilon is a rank-0 constant.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x8xf32>, %[[G:[^:]+]]: tensor<3x8xf32>, %[[B:[^:]+]]: tensor<3x8xf32>)
// CHECK: %[[MEAN:.+]] = "nn.reduce_mean"(%[[X]]) {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
// CHECK: %[[DEV:.+]] = "nn.sub"(%[[X]], %[[MEAN]])
// CHECK: %[[SQ:.+]] = "nn.mul"(%[[DEV]], %[[DEV]])
// CHECK: %[[VAR:.+]] = "nn.reduce_mean"(%[[SQ]]) {axes = array<i64: 1, 2>, keepdims = true}
// CHECK: %[[EPS:.+]] = arith.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[VE:.+]] = "nn.add"(%[[VAR]], %[[EPS]])
// CHECK: %[[INV:.+]] = "nn.rsqrt"(%[[VE]])
// CHECK: %[[N:.+]] = "nn.mul"(%[[DEV]], %[[INV]])
// CHECK: %[[S:.+]] = "nn.mul"(%[[N]], %[[G]])
// CHECK: %[[Y:.+]] = "nn.add"(%[[S]], %[[B]])
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<3x8xf32>) -> tensor<2x3x8xf32> {
  %y = "nn.layer_norm"(%x, %g, %b) {axis = 1 : i64, epsilon = 1.0e-3 : f32}
      : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// f16 is computed in f32 and rounded once, as the reference does.

// CHECK-LABEL: func.func @rms_norm_f16
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf16>, %[[G:[^:]+]]: tensor<8xf16>)
// CHECK: %[[X32:.+]] = "nn.cast"(%[[X]]) : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK: %[[SQ:.+]] = "nn.mul"(%[[X32]], %[[X32]])
// CHECK: %[[MS:.+]] = "nn.reduce_mean"(%[[SQ]]) {axes = array<i64: 1>, keepdims = true}
// CHECK: "nn.rsqrt"
// CHECK: %[[G32:.+]] = "nn.cast"(%[[G]]) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK: %[[Y32:.+]] = "nn.mul"(%{{.+}}, %[[G32]])
// CHECK: %[[Y:.+]] = "nn.cast"(%[[Y32]]) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK: return %[[Y]]
func.func @rms_norm_f16(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  %y = "nn.rms_norm"(%x, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @gelu_exact
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = arith.constant dense<0.707106769> : tensor<f32>
// CHECK: %[[S:.+]] = "nn.mul"(%[[X]], %[[C]])
// CHECK: %[[E:.+]] = "nn.erf"(%[[S]])
// CHECK: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[H:.+]] = "nn.mul"(%[[X]], %[[HALF]])
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G:.+]] = "nn.add"(%[[E]], %[[ONE]])
// CHECK: %[[Y:.+]] = "nn.mul"(%[[H]], %[[G]])
// CHECK-NOT: "nn.gelu"
// CHECK: return %[[Y]]
func.func @gelu_exact(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "nn.gelu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh
// CHECK: "nn.tanh"
// CHECK-NOT: "nn.erf"
// CHECK-NOT: "nn.gelu"
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "nn.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.+]]: tensor<4xbf16>)
// CHECK: %[[X32:.+]] = "nn.cast"(%[[X]]) : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK: %[[S:.+]] = "nn.sigmoid"(%[[X32]])
// CHECK: %[[Y:.+]] = "nn.mul"(%[[X32]], %[[S]])
// CHECK: "nn.cast"(%[[Y]]) : (tensor<4xf32>) -> tensor<4xbf16>
func.func @silu(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %y = "nn.silu"(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// Attention stays whole by default (keep-attention=true); with
// keep-attention=false it becomes q k^T with its epilogue, a softmax's row
// statistics and a matmul divided by the row sums. With a mask, a row whose
// keys are all hidden is shifted by 0 (not its maximum, -inf) and divided by
// 1 (not its sum, 0): it gives 0, not NaN.

// CHECK-LABEL: func.func @attention
// CHECK: "nn.attention"
// CHECK-NOT: "nn.matmul"

// WHOLE-LABEL: func.func @attention
// WHOLE-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x5x8xf32>, %[[V:[^:]+]]: tensor<2x5x3xf32>, %[[M:[^:]+]]: tensor<4x5xf32>)
// WHOLE: %[[KT:.+]] = "nn.transpose"(%[[K]]) {perm = array<i64: 0, 2, 1>}
// WHOLE: %[[S:.+]] = "nn.matmul"(%[[Q]], %[[KT]]) : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
// WHOLE: %[[SCALE:.+]] = arith.constant dense<2.500000e-01> : tensor<f32>
// WHOLE: %[[SS:.+]] = "nn.mul"(%[[S]], %[[SCALE]])
// WHOLE: %[[SM:.+]] = "nn.add"(%[[SS]], %[[M]])
// WHOLE: %[[HIDDEN:.+]] = arith.constant dense<{{\[\[}}false, true, true, true, true], [false, false, true, true, true], [false, false, false, true, true], [false, false, false, false, true]]> : tensor<4x5xi1>
// WHOLE: %[[NEGINF:.+]] = arith.constant dense<0xFF800000> : tensor<f32>
// WHOLE: %[[L:.+]] = "nn.select"(%[[HIDDEN]], %[[NEGINF]], %[[SM]])
// WHOLE: %[[MAX:.+]] = "nn.reduce_max"(%[[L]]) {axes = array<i64: 2>, keepdims = true}
// WHOLE: %[[NEGINF2:.+]] = arith.constant dense<0xFF800000> : tensor<f32>
// WHOLE: %[[EMPTY:.+]] = "nn.compare"(%[[MAX]], %[[NEGINF2]]) {predicate = "eq"}
// WHOLE: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// WHOLE: %[[SHIFT:.+]] = "nn.select"(%[[EMPTY]], %[[ZERO]], %[[MAX]])
// WHOLE: %[[SHIFTED:.+]] = "nn.sub"(%[[L]], %[[SHIFT]])
// WHOLE: %[[P:.+]] = "nn.exp"(%[[SHIFTED]])
// WHOLE: %[[SUM:.+]] = "nn.reduce_sum"(%[[P]]) {axes = array<i64: 2>, keepdims = true}
// WHOLE: %[[ZERO2:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// WHOLE: %[[NONE:.+]] = "nn.compare"(%[[SUM]], %[[ZERO2]]) {predicate = "eq"}
// WHOLE: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// WHOLE: %[[DIVISOR:.+]] = "nn.select"(%[[NONE]], %[[ONE]], %[[SUM]])
// WHOLE: %[[PV:.+]] = "nn.matmul"(%[[P]], %[[V]]) : (tensor<2x4x5xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
// WHOLE: %[[O:.+]] = "nn.div"(%[[PV]], %[[DIVISOR]])
// WHOLE-NOT: "nn.attention"
// WHOLE: return %[[O]]
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x3xf32>,
                     %m: tensor<4x5xf32>) -> tensor<2x4x3xf32> {
  %o = "nn.attention"(%q, %k, %v, %m) {causal = true, scale = 0.25 : f32}
      : (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>, tensor<4x5xf32>) -> tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

// -----

// Without a mask no row is hidden whole (causality leaves key 0): the
// maximum and the sum are used as they are.

// WHOLE-LABEL: func.func @attention_unmasked
// WHOLE: %[[MAX:.+]] = "nn.reduce_max"
// WHOLE-NOT: "nn.compare"
// WHOLE: "nn.sub"(%{{.+}}, %[[MAX]])
// WHOLE: %[[SUM:.+]] = "nn.reduce_sum"
// WHOLE-NOT: "nn.select"
// WHOLE: "nn.div"(%{{.+}}, %[[SUM]])
func.func @attention_unmasked(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>,
                              %v: tensor<2x5x3xf32>) -> tensor<2x4x3xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true}
      : (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

// -----

// Ops that are not composites are left alone.

// CHECK-LABEL: func.func @primitives_unchanged
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x4xf32>, %[[W:[^:]+]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[M:.+]] = "nn.matmul"(%[[X]], %[[W]])
// CHECK-NEXT: %[[R:.+]] = "nn.relu"(%[[M]])
// CHECK-NEXT: %[[S:.+]] = "nn.reduce_sum"(%[[R]]) {axes = array<i64: 0>}
// CHECK-NEXT: return %[[S]]
func.func @primitives_unchanged(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {
  %m = "nn.matmul"(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = "nn.relu"(%m) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = "nn.reduce_sum"(%r) {axes = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
