// RUN: lamina-opt %s --split-input-file --nn-assign-layouts | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-assign-layouts='layout=NHWC' | FileCheck %s --check-prefix=FORCED
// RUN: lamina-opt %s --split-input-file --nn-assign-layouts='layout=NCHW' | FileCheck %s --check-prefix=NONE
// RUN: not lamina-opt %s --split-input-file --nn-assign-layouts='layout=NCWH' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: nn-assign-layouts: 'layout' must be one of auto, NHWC, NCHW, got 'NCWH'

// A residual block (conv, batch norm, relu, conv, batch norm, add, relu):
// one transpose in, one out; the batch norm's [C, 1, 1] scale and shift
// are reshaped to [1, 1, 1, C].
// CHECK-LABEL: func.func @residual_block
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x6x8xf32>, %[[W1:.+]]: tensor<4x4x3x3xf32>, %[[W2:.+]]: tensor<4x4x3x3xf32>, %[[S:.+]]: tensor<4x1x1xf32>, %[[T:.+]]: tensor<4x1x1xf32>)
// CHECK: %[[IN:.+]] = "nn.transpose"(%[[X]]) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x8xf32>) -> tensor<1x6x8x4xf32>
// CHECK: %[[C1:.+]] = "nn.conv2d"(%[[IN]], %[[W1]]) {layout = "NHWC", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x6x8x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x6x8x4xf32>
// CHECK: %[[SCALE:.+]] = "nn.reshape"(%[[S]]) : (tensor<4x1x1xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[M1:.+]] = "nn.mul"(%[[C1]], %[[SCALE]])
// CHECK: %[[SHIFT:.+]] = "nn.reshape"(%[[T]]) : (tensor<4x1x1xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[A1:.+]] = "nn.add"(%[[M1]], %[[SHIFT]])
// CHECK: %[[R1:.+]] = "nn.relu"(%[[A1]]) : (tensor<1x6x8x4xf32>) -> tensor<1x6x8x4xf32>
// CHECK: %[[C2:.+]] = "nn.conv2d"(%[[R1]], %[[W2]]) {layout = "NHWC"
// CHECK: %[[M2:.+]] = "nn.mul"(%[[C2]], %[[SCALE]])
// CHECK: %[[A2:.+]] = "nn.add"(%[[M2]], %[[SHIFT]])
// CHECK: %[[SUM:.+]] = "nn.add"(%[[A2]], %[[IN]]) : (tensor<1x6x8x4xf32>, tensor<1x6x8x4xf32>) -> tensor<1x6x8x4xf32>
// CHECK: %[[R2:.+]] = "nn.relu"(%[[SUM]])
// CHECK-NOT: "nn.transpose"
// CHECK: %[[OUT:.+]] = "nn.transpose"(%[[R2]]) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x6x8x4xf32>) -> tensor<1x4x6x8xf32>
// CHECK-NEXT: return %[[OUT]]
// NONE-LABEL: func.func @residual_block
// NONE-NOT: "nn.transpose"
// NONE-NOT: layout
// NONE: return
func.func @residual_block(%x: tensor<1x4x6x8xf32>, %w1: tensor<4x4x3x3xf32>, %w2: tensor<4x4x3x3xf32>, %s: tensor<4x1x1xf32>, %t: tensor<4x1x1xf32>) -> tensor<1x4x6x8xf32> {
  %c1 = "nn.conv2d"(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %m1 = "nn.mul"(%c1, %s) : (tensor<1x4x6x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %a1 = "nn.add"(%m1, %t) : (tensor<1x4x6x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %r1 = "nn.relu"(%a1) : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %c2 = "nn.conv2d"(%r1, %w2) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %m2 = "nn.mul"(%c2, %s) : (tensor<1x4x6x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %a2 = "nn.add"(%m2, %t) : (tensor<1x4x6x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %sum = "nn.add"(%a2, %x) : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %r2 = "nn.relu"(%sum) : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  return %r2 : tensor<1x4x6x8xf32>
}

// -----

// Clipping (relu6: maximum and minimum with scalars) and pooling follow
// the convolutions; the pooling's padding keeps its meaning.
// CHECK-LABEL: func.func @clip_and_pool
// CHECK: "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[LOW:.+]] = "nn.maximum"(%{{.+}}, %[[ZERO:.+]]) : (tensor<1x6x8x4xf32>, tensor<f32>) -> tensor<1x6x8x4xf32>
// CHECK: %[[HIGH:.+]] = "nn.minimum"(%[[LOW]], %{{.+}}) : (tensor<1x6x8x4xf32>, tensor<f32>)
// CHECK: %[[POOL:.+]] = "nn.max_pool2d"(%[[HIGH]]) {kernel = array<i64: 3, 3>, layout = "NHWC", padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x8x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK: %[[AVG:.+]] = "nn.avg_pool2d"(%[[POOL]]) {kernel = array<i64: 1, 2>, layout = "NHWC"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK: "nn.transpose"(%[[AVG]]) {perm = array<i64: 0, 3, 1, 2>}
func.func @clip_and_pool(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %six = arith.constant dense<6.0> : tensor<f32>
  %b = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %c = "nn.conv2d"(%b, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %low = "nn.maximum"(%c, %zero) : (tensor<1x4x6x8xf32>, tensor<f32>) -> tensor<1x4x6x8xf32>
  %high = "nn.minimum"(%low, %six) : (tensor<1x4x6x8xf32>, tensor<f32>) -> tensor<1x4x6x8xf32>
  %p = "nn.max_pool2d"(%high) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>) -> tensor<1x4x3x4xf32>
  %a = "nn.avg_pool2d"(%p) {kernel = array<i64: 1, 2>} : (tensor<1x4x3x4xf32>) -> tensor<1x4x3x3xf32>
  return %a : tensor<1x4x3x3xf32>
}

// -----

// A concatenation along the channels is one along NHWC's last dim.
// CHECK-LABEL: func.func @concat_channels
// CHECK: %[[A:.+]] = "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[B:.+]] = "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[CAT:.+]] = "nn.concat"(%[[A]], %[[B]]) {axis = 3 : i64} : (tensor<1x6x8x4xf32>, tensor<1x6x8x4xf32>) -> tensor<1x6x8x8xf32>
// CHECK: "nn.transpose"(%[[CAT]]) {perm = array<i64: 0, 3, 1, 2>}
func.func @concat_channels(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x8x6x8xf32> {
  %a = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %b = "nn.conv2d"(%a, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %cat = "nn.concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> tensor<1x8x6x8xf32>
  return %cat : tensor<1x8x6x8xf32>
}

// -----

// Global average pooling and flatten: the mean over H and W keeps its
// dims, and the flatten of [1, C, 1, 1] is a reshape of [1, 1, 1, C];
// nothing is transposed back.
// CHECK-LABEL: func.func @global_pool_flatten
// CHECK: %[[C:.+]] = "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[MEAN:.+]] = "nn.reduce_mean"(%[[C]]) {axes = array<i64: 1, 2>, keepdims = true} : (tensor<1x6x8x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: %[[FLAT:.+]] = "nn.reshape"(%[[MEAN]]) : (tensor<1x1x1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: return %[[FLAT]]
func.func @global_pool_flatten(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4xf32> {
  %c = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %m = "nn.reduce_mean"(%c) {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x4x6x8xf32>) -> tensor<1x4x1x1xf32>
  %f = "nn.reshape"(%m) : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  return %f : tensor<1x4xf32>
}

// -----

// A reduction without keepdims whose kept dims keep their order reads the
// NHWC activation; a transpose composes with the layout's (here into the
// identity).
// CHECK-LABEL: func.func @readers_of_nhwc
// CHECK: %[[C:.+]] = "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[SUM:.+]] = "nn.reduce_sum"(%[[C]]) {axes = array<i64: 1, 2>} : (tensor<1x6x8x4xf32>) -> tensor<1x4xf32>
// CHECK-NOT: "nn.transpose"
// CHECK: return %[[SUM]], %[[C]]
func.func @readers_of_nhwc(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4xf32>, tensor<1x6x8x4xf32>) {
  %c = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %s = "nn.reduce_sum"(%c) {axes = array<i64: 2, 3>} : (tensor<1x4x6x8xf32>) -> tensor<1x4xf32>
  %t = "nn.transpose"(%c) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x8xf32>) -> tensor<1x6x8x4xf32>
  return %s, %t : tensor<1x4xf32>, tensor<1x6x8x4xf32>
}

// -----

// A pad of an activation has its pads permuted.
// CHECK-LABEL: func.func @pad
// CHECK: "nn.pad"(%{{.+}}) {high = array<i64: 0, 2, 0, 0>, low = array<i64: 0, 1, 3, 0>} : (tensor<1x6x8x4xf32>) -> tensor<1x9x11x4xf32>
func.func @pad(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x9x11xf32> {
  %b = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %c = "nn.conv2d"(%b, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %p = "nn.pad"(%c) {low = array<i64: 0, 0, 1, 3>, high = array<i64: 0, 0, 2, 0>} : (tensor<1x4x6x8xf32>) -> tensor<1x4x9x11xf32>
  return %p : tensor<1x4x9x11xf32>
}

// -----

// An op with no rule (softmax over the channels) keeps NCHW: it reads the
// convolution's result transposed back, and so does the function's
// result, from the same transpose.
// CHECK-LABEL: func.func @no_rule_keeps_nchw
// CHECK: "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[C:.+]] = "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK: %[[R:.+]] = "nn.relu"(%[[C]])
// CHECK-NEXT: %[[BACK:.+]] = "nn.transpose"(%[[R]]) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x6x8x4xf32>) -> tensor<1x4x6x8xf32>
// CHECK-NOT: "nn.transpose"
// CHECK: %[[SOFT:.+]] = "nn.softmax"(%[[BACK]]) {axis = 1 : i64} : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
// CHECK: return %[[SOFT]], %[[BACK]]
func.func @no_rule_keeps_nchw(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) {
  %b = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %c = "nn.conv2d"(%b, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %r = "nn.relu"(%c) : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %s = "nn.softmax"(%r) {axis = 1 : i64} : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  return %s, %r : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>
}

// -----

// A depthwise convolution counts as a dense one (it computes in NHWC with
// no transpose, faster than in NCHW) and a 1x1 one of stride 1 computes in
// either: one depthwise convolution saves no more than the region's two
// edges cost, so the region stays NCHW, unless asked for NHWC. So does a
// region whose one dense convolution would save no more transposes than
// its edges cost (@pad with one convolution fewer).
// CHECK-LABEL: func.func @depthwise_stays_nchw
// CHECK-NOT: "nn.transpose"
// CHECK-NOT: layout
// CHECK: return
// FORCED-LABEL: func.func @depthwise_stays_nchw
// FORCED: "nn.transpose"(%{{.+}}) {perm = array<i64: 0, 2, 3, 1>}
// FORCED: "nn.conv2d"({{.*}}layout = "NHWC"
// FORCED: "nn.conv2d"({{.*}}groups = 4 : i64, layout = "NHWC"
// FORCED: "nn.transpose"(%{{.+}}) {perm = array<i64: 0, 3, 1, 2>}
func.func @depthwise_stays_nchw(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x1x1xf32>, %d: tensor<4x1x3x3xf32>) -> tensor<1x4x6x8xf32> {
  %p = "nn.conv2d"(%x, %w) : (tensor<1x4x6x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %r = "nn.relu"(%p) : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %q = "nn.conv2d"(%r, %d) {groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x8xf32>
  return %q : tensor<1x4x6x8xf32>
}

// -----

// Two depthwise convolutions (an inverted residual's, between 1x1 ones)
// save more than the edges cost: the region is channels-last.
// CHECK-LABEL: func.func @depthwise_pair
// CHECK: "nn.transpose"(%arg0) {perm = array<i64: 0, 2, 3, 1>}
// CHECK: "nn.conv2d"({{.*}}groups = 4 : i64, layout = "NHWC"{{.*}} -> tensor<1x6x8x4xf32>
// CHECK: "nn.relu"{{.*}} -> tensor<1x6x8x4xf32>
// CHECK: "nn.conv2d"({{.*}}layout = "NHWC"{{.*}} -> tensor<1x6x8x4xf32>
// CHECK: "nn.conv2d"({{.*}}groups = 4 : i64, layout = "NHWC"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "nn.transpose"(%{{.+}}) {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NOT: "nn.transpose"
// CHECK: return
func.func @depthwise_pair(%x: tensor<1x4x6x8xf32>, %d: tensor<4x1x3x3xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x3x4xf32> {
  %a = "nn.conv2d"(%x, %d) {groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x8xf32>
  %r = "nn.relu"(%a) : (tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  %p = "nn.conv2d"(%r, %w) : (tensor<1x4x6x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %b = "nn.conv2d"(%p, %d) {groups = 4 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x4xf32>
  return %b : tensor<1x4x3x4xf32>
}

// -----

// Grouped convolutions that are not depthwise (two channels per group)
// compute in NCHW: two of them keep their region NCHW.
// CHECK-LABEL: func.func @grouped_stays_nchw
// CHECK-NOT: "nn.transpose"
// CHECK-NOT: layout
// CHECK: return
func.func @grouped_stays_nchw(%x: tensor<1x4x6x8xf32>, %g: tensor<4x2x3x3xf32>) -> tensor<1x4x6x8xf32> {
  %a = "nn.conv2d"(%x, %g) {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x8xf32>
  %b = "nn.conv2d"(%a, %g) {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x8xf32>
  return %b : tensor<1x4x6x8xf32>
}

// -----

// Elementwise ops on 4-D tensors with no convolution stay as they are.
// CHECK-LABEL: func.func @no_convolution
// CHECK-NOT: "nn.transpose"
// CHECK: "nn.add"
// FORCED-LABEL: func.func @no_convolution
// FORCED-NOT: "nn.transpose"
// FORCED: return
func.func @no_convolution(%x: tensor<1x4x6x8xf32>, %y: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %s = "nn.add"(%x, %y) : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  return %s : tensor<1x4x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @one_convolution_between_edges
// FORCED-LABEL: func.func @one_convolution_between_edges
// CHECK-NOT: "nn.transpose"
// CHECK-NOT: layout
// CHECK: return
func.func @one_convolution_between_edges(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x9x11xf32> {
  %c = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %p = "nn.pad"(%c) {low = array<i64: 0, 0, 1, 3>, high = array<i64: 0, 0, 2, 0>} : (tensor<1x4x6x8xf32>) -> tensor<1x4x9x11xf32>
  return %p : tensor<1x4x9x11xf32>
}

// -----

// A 1x1 convolution between dense ones computes channels-last with them.
// CHECK-LABEL: func.func @pointwise_between_dense
// CHECK: "nn.transpose"
// CHECK-NEXT: "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK-NEXT: "nn.conv2d"({{.*}}layout = "NHWC"{{.*}}tensor<4x4x1x1xf32>
// CHECK-NEXT: "nn.conv2d"({{.*}}layout = "NHWC"
// CHECK-NEXT: "nn.transpose"
func.func @pointwise_between_dense(%x: tensor<1x4x6x8xf32>, %w: tensor<4x4x3x3xf32>, %p: tensor<4x4x1x1xf32>) -> tensor<1x4x6x8xf32> {
  %a = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  %b = "nn.conv2d"(%a, %p) : (tensor<1x4x6x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x8xf32>
  %c = "nn.conv2d"(%b, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x8xf32>
  return %c : tensor<1x4x6x8xf32>
}
