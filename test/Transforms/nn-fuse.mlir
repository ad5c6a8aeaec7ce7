// RUN: lamina-opt %s --split-input-file --nn-fuse | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-fuse='max-group-size=2' | FileCheck %s --check-prefix=SIZE2

// Rule: an elementwise chain is one group, broadcasting operands (a bias of
// [8], a scale of [1x8]) becoming its inputs.

// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %[[C:[^:]+]]: tensor<1x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%[[X]], %[[A]], %[[B]], %[[C]]) {body = @[[BODY:fusion_0]], kind = "elementwise"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]](%[[BX:[^:]+]]: tensor<4x8xf32>, %[[BA:[^:]+]]: tensor<4x8xf32>, %[[BB:[^:]+]]: tensor<8xf32>, %[[BC:[^:]+]]: tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[M:.+]] = "nn.mul"(%[[BX]], %[[BA]])
// CHECK-NEXT: %[[S:.+]] = "nn.add"(%[[M]], %[[BB]])
// CHECK-NEXT: %[[R:.+]] = "nn.relu"(%[[S]])
// CHECK-NEXT: %[[O:.+]] = "nn.mul"(%[[R]], %[[BC]])
// CHECK-NEXT: return %[[O]] : tensor<4x8xf32>

// SIZE2-LABEL: func.func @elementwise_chain
// SIZE2-NEXT: %[[G0:.+]] = "nn.fused"({{.*}}) {body = @fusion_0, kind = "elementwise"}
// SIZE2-NEXT: %[[G1:.+]] = "nn.fused"(%[[G0]], {{.*}}) {body = @fusion_1, kind = "elementwise"}
// SIZE2-NEXT: return %[[G1]]
// SIZE2: func.func private @fusion_0
// SIZE2-NEXT: "nn.mul"
// SIZE2-NEXT: "nn.add"
// SIZE2-NEXT: return
// SIZE2: func.func private @fusion_1
// SIZE2-NEXT: "nn.relu"
// SIZE2-NEXT: "nn.mul"
// SIZE2-NEXT: return
func.func @elementwise_chain(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<8xf32>,
                             %c: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = "nn.mul"(%x, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "nn.add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "nn.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "nn.mul"(%2, %c) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Rule: two elementwise chains meeting at a broadcasting op merge into one
// group; select, compare and cast are elementwise too.

// CHECK-LABEL: func.func @chains_merge
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%{{.+}}, %{{.+}}) {body = @[[BODY:.+]], kind = "elementwise"} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.exp"
// CHECK-NEXT: "nn.tanh"
// CHECK-NEXT: "nn.compare"
// CHECK-NEXT: "nn.select"
// CHECK-NEXT: "nn.cast"
// CHECK-NEXT: return
func.func @chains_merge(%x: tensor<8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf16> {
  %0 = "nn.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "nn.tanh"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "nn.compare"(%1, %0) {predicate = "lt"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %3 = "nn.select"(%2, %1, %0) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "nn.cast"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %4 : tensor<4x8xf16>
}

// -----

// Rule: a softmax (as nn-decompose writes it) is one reduction group: both
// reductions iterate the same rows, and the ops between them read the row
// statistics (keepdims) at their own row.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%[[X]]) {body = @[[BODY:.+]], kind = "reduction"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]](%[[BX:.+]]: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[MAX:.+]] = "nn.reduce_max"(%[[BX]])
// CHECK-NEXT: %[[SHIFTED:.+]] = "nn.sub"(%[[BX]], %[[MAX]])
// CHECK-NEXT: %[[E:.+]] = "nn.exp"(%[[SHIFTED]])
// CHECK-NEXT: %[[SUM:.+]] = "nn.reduce_sum"(%[[E]])
// CHECK-NEXT: %[[P:.+]] = "nn.div"(%[[E]], %[[SUM]])
// CHECK-NEXT: return %[[P]]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %max = "nn.reduce_max"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %shifted = "nn.sub"(%x, %max) : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %e = "nn.exp"(%shifted) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = "nn.reduce_sum"(%e) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %y = "nn.div"(%e, %sum) : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Rule: a layer_norm (as nn-decompose writes it) is one reduction group,
// elementwise steps on the row statistics ([2x1]) included; the splat
// epsilon is cloned into the group, gamma and beta are inputs.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK-NOT: arith.constant
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%[[X]], %[[G]], %[[B]]) {body = @[[BODY:.+]], kind = "reduction"}
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: arith.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT: "nn.reduce_mean"
// CHECK-NEXT: "nn.sub"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: "nn.reduce_mean"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: "nn.rsqrt"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: return
func.func @layer_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %mean = "nn.reduce_mean"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %dev = "nn.sub"(%x, %mean) : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = "nn.mul"(%dev, %dev) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %var = "nn.reduce_mean"(%sq) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %ve = "nn.add"(%var, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %inv = "nn.rsqrt"(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = "nn.mul"(%dev, %inv) : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %s = "nn.mul"(%n, %g) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %y = "nn.add"(%s, %b) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Rule: producers into a reduction, and elementwise ops on the row
// statistics without keepdims when they line up with the rows (the reduced
// axis leads).

// CHECK-LABEL: func.func @producers_into_reduction
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%{{.+}}, %{{.+}}) {body = @[[BODY:.+]], kind = "reduction"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8xf32>
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.sub"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: "nn.reduce_sum"
// CHECK-NEXT: "nn.sqrt"
// CHECK-NEXT: return
func.func @producers_into_reduction(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<8xf32> {
  %d = "nn.sub"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = "nn.mul"(%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "nn.reduce_sum"(%sq) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  %n = "nn.sqrt"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// Refusal: a row statistic without keepdims over the last axis would be
// read along the wrong dim by NumPy's broadcasting ([4] against [4x4] lines
// up with the columns), so its consumer stays out of the reduction's group.

// CHECK-LABEL: func.func @misaligned_rows
// CHECK-SAME: (%[[X:.+]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[S:.+]] = "nn.fused"(%[[X]]) {body = @[[BODY:.+]], kind = "reduction"} : (tensor<4x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.+]] = "nn.add"(%[[X]], %[[S]])
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.exp"
// CHECK-NEXT: "nn.reduce_sum"
// CHECK-NEXT: return
func.func @misaligned_rows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = "nn.exp"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = "nn.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %y = "nn.add"(%x, %s) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Refusal: reductions over different rows are different groups.

// CHECK-LABEL: func.func @different_rows
// CHECK-NEXT: %[[R:.+]] = "nn.fused"(%{{.+}}) {body = @[[BODY:.+]], kind = "reduction"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[C:.+]] = "nn.reduce_sum"(%[[R]]) {axes = array<i64: 0>}
// CHECK-NEXT: return %[[C]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.reduce_max"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: return
func.func @different_rows(%x: tensor<4x8xf32>) -> tensor<1xf32> {
  %r = "nn.reduce_max"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %r2 = "nn.mul"(%r, %r) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %c = "nn.reduce_sum"(%r2) {axes = array<i64: 0>} : (tensor<4x1xf32>) -> tensor<1xf32>
  return %c : tensor<1xf32>
}

// -----

// Rule: a contraction's epilogue (bias, activation, residual add, cast) is
// one group with it.

// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[W:[^:]+]]: tensor<8x16xf32>, %[[B:[^:]+]]: tensor<16xf32>, %[[R:[^:]+]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%[[X]], %[[W]], %[[B]], %[[R]]) {body = @[[BODY:.+]], kind = "contraction"} : ({{.*}}) -> tensor<4x16xf16>
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.matmul"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: "nn.gelu"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: "nn.cast"
// CHECK-NEXT: return
func.func @matmul_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                           %r: tensor<4x16xf32>) -> tensor<4x16xf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "nn.gelu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "nn.add"(%2, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = "nn.cast"(%3) : (tensor<4x16xf32>) -> tensor<4x16xf16>
  return %4 : tensor<4x16xf16>
}

// -----

// Rule: a convolution's epilogue; the group's kind is convolution.

// CHECK-LABEL: func.func @conv2d_relu
// CHECK-NEXT: "nn.fused"({{.*}}) {body = @[[BODY:.+]], kind = "convolution"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.conv2d"
// CHECK-NEXT: "nn.relu"
// CHECK-NEXT: return
func.func @conv2d_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %1 = "nn.relu"(%0) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// -----

// Refusal: producers of a contraction stay outside its group (no prologue
// fusion), and an elementwise consumer that is not shaped like the
// contraction's result (it broadcasts it) is not an epilogue. Groups of
// one op are left as they are.

// CHECK-LABEL: func.func @no_prologue_no_broadcast_epilogue
// CHECK-NEXT: "nn.relu"
// CHECK-NEXT: "nn.matmul"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: return
// CHECK-NOT: "nn.fused"
// CHECK-NOT: func.func private
func.func @no_prologue_no_broadcast_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                                             %big: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = "nn.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "nn.matmul"(%0, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = "nn.add"(%1, %big) : (tensor<4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %2 : tensor<2x4x16xf32>
}

// -----

// Refusal: a reduction does not join a contraction's group; the softmax of
// a matmul is a group of its own, reading the matmul's group result.

// CHECK-LABEL: func.func @matmul_then_softmax
// CHECK-NEXT: %[[MM:.+]] = "nn.fused"({{.*}}) {body = @[[MMBODY:.+]], kind = "contraction"}
// CHECK-NEXT: %[[SM:.+]] = "nn.fused"(%[[MM]]) {body = @[[SMBODY:.+]], kind = "reduction"}
// CHECK-NEXT: return %[[SM]]
// CHECK: func.func private @[[MMBODY]]
// CHECK-NEXT: "nn.matmul"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: return
// CHECK: func.func private @[[SMBODY]]
// CHECK-NEXT: "nn.reduce_max"
// CHECK-NEXT: "nn.sub"
// CHECK-NEXT: "nn.exp"
// CHECK-NEXT: "nn.reduce_sum"
// CHECK-NEXT: "nn.div"
// CHECK-NEXT: return
func.func @matmul_then_softmax(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %max = "nn.reduce_max"(%1) {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %shifted = "nn.sub"(%1, %max) : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %e = "nn.exp"(%shifted) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = "nn.reduce_sum"(%e) {axes = array<i64: 1>, keepdims = true} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %y = "nn.div"(%e, %sum) : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Refusal: one contraction per group; the sum of two matmuls is the first
// one's epilogue and reads the second one, left alone.

// CHECK-LABEL: func.func @two_contractions
// CHECK-NEXT: %[[M2:.+]] = "nn.matmul"
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"(%{{.+}}, %{{.+}}, %[[M2]]) {body = @[[BODY:.+]], kind = "contraction"}
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.matmul"
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: return
func.func @two_contractions(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.matmul"(%y, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = "nn.add"(%0, %1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Rule: multi-output groups. A value of the group that is also used outside
// it is one of the group's results.

// CHECK-LABEL: func.func @multi_output
// CHECK-NEXT: %[[G:.+]]:2 = "nn.fused"(%{{.+}}, %{{.+}}) {body = @[[BODY:.+]], kind = "elementwise"} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: %[[S:.+]] = "nn.add"
// CHECK-NEXT: %[[R:.+]] = "nn.relu"(%[[S]])
// CHECK-NEXT: return %[[S]], %[[R]]
func.func @multi_output(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "nn.add"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "nn.relu"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Refusal: an expensive producer is never duplicated. The matmul has users
// in its epilogue's group, in a reduction group and outside any group: it
// is computed once, in its epilogue's group, whose results the others read.
// (Its row-wise consumer cannot be its epilogue: the row maximum it reads
// depends on the matmul.)

// CHECK-LABEL: func.func @expensive_producer_computed_once
// CHECK-NEXT: %[[G:.+]]:2 = "nn.fused"({{.*}}) {body = @[[BODY:.+]], kind = "contraction"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: %[[S:.+]] = "nn.fused"(%[[G]]#0) {body = @[[SBODY:.+]], kind = "reduction"}
// CHECK-NEXT: %[[T:.+]] = "nn.transpose"(%[[G]]#0)
// CHECK-NEXT: return %[[G]]#1, %[[S]], %[[T]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: %[[M:.+]] = "nn.matmul"
// CHECK-NEXT: %[[R:.+]] = "nn.relu"(%[[M]])
// CHECK-NEXT: return %[[M]], %[[R]]
// CHECK: func.func private @[[SBODY]]
// CHECK-NEXT: "nn.reduce_max"
// CHECK-NEXT: "nn.sub"
// CHECK-NEXT: "nn.exp"
// CHECK-NEXT: return
// CHECK-NOT: "nn.matmul"
func.func @expensive_producer_computed_once(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %m = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = "nn.relu"(%m) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %mx = "nn.reduce_max"(%m) {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = "nn.sub"(%m, %mx) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %e = "nn.exp"(%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %r, %e, %t : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// Refusal: data movement is a boundary (no fusion across a reshape).

// CHECK-LABEL: func.func @no_fusion_across_reshape
// CHECK-NEXT: "nn.exp"
// CHECK-NEXT: "nn.reshape"
// CHECK-NEXT: "nn.relu"
// CHECK-NEXT: return
// CHECK-NOT: "nn.fused"
func.func @no_fusion_across_reshape(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = "nn.exp"(%x) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %1 = "nn.reshape"(%0) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %2 = "nn.relu"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}

// -----

// Refusal: no cycles. %d would close a path that leaves the group through
// the reshapes and comes back, so it starts a group of its own with the
// next op; the ops in between keep their order.

// CHECK-LABEL: func.func @no_cycle_through_outside_ops
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK-NEXT: %[[A:.+]] = "nn.exp"(%[[X]])
// CHECK-NEXT: %[[B:.+]] = "nn.reshape"(%[[A]])
// CHECK-NEXT: %[[C:.+]] = "nn.reshape"(%[[B]])
// CHECK-NEXT: %[[D:.+]] = "nn.fused"(%[[A]], %[[C]]) {body = @[[BODY:.+]], kind = "elementwise"}
// CHECK-NEXT: return %[[D]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.add"
// CHECK-NEXT: "nn.neg"
// CHECK-NEXT: return
func.func @no_cycle_through_outside_ops(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %a = "nn.exp"(%x) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %b = "nn.reshape"(%a) : (tensor<2x6xf32>) -> tensor<12xf32>
  %c = "nn.reshape"(%b) : (tensor<12xf32>) -> tensor<2x6xf32>
  %d = "nn.add"(%a, %c) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %e = "nn.neg"(%d) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %e : tensor<2x6xf32>
}

// -----

// Refusal: opaque ops (attention kept whole, ops of other dialects) are
// boundaries. A group stands where its last op stood: an op between its
// ops that does not depend on it stays before it.

// CHECK-LABEL: func.func @opaque_boundaries
// CHECK-NEXT: %[[A:.+]] = "nn.attention"
// CHECK-NEXT: %[[G:.+]] = "nn.fused"(%[[A]]{{.*}}) {body = @[[BODY:.+]], kind = "elementwise"}
// CHECK-NEXT: return %[[G]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.relu"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: return
func.func @opaque_boundaries(%q: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = "nn.attention"(%q, %q, %q) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = "nn.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = "nn.mul"(%r, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// A group stands where its last op stood; an independent op between its ops
// moves only if it reads the group.

// CHECK-LABEL: func.func @group_results_before_users
// CHECK-NEXT: %[[T:.+]] = "nn.transpose"
// CHECK-NEXT: %[[G:.+]]:2 = "nn.fused"
// CHECK-NEXT: %[[U:.+]] = "nn.transpose"(%[[G]]#0)
// CHECK-NEXT: return %[[G]]#1, %[[T]], %[[U]]
func.func @group_results_before_users(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %a = "nn.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %u = "nn.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t = "nn.transpose"(%y) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %b = "nn.tanh"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %b, %t, %u : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}
