// The CPU pipeline's `layout` stage stores the activations of a chain of
// convolutions channels-last, and the scheduled linalg transposes them
// only at the program's edges.
// RUN: lamina-compile %s --emit=layout | FileCheck %s --check-prefix=LAYOUT
// RUN: lamina-compile %s --emit=schedule | FileCheck %s --check-prefix=SCHEDULE

// LAYOUT-LABEL: func.func @main
// LAYOUT: "nn.transpose"(%arg0) {perm = array<i64: 0, 2, 3, 1>}
// LAYOUT: "nn.conv2d"({{.*}}layout = "NHWC"
// LAYOUT: "nn.relu"({{.*}}tensor<1x12x10x8xf32>
// LAYOUT: "nn.conv2d"({{.*}}layout = "NHWC"
// LAYOUT: "nn.max_pool2d"({{.*}}layout = "NHWC"
// LAYOUT: "nn.transpose"({{.*}}perm = array<i64: 0, 3, 1, 2>}
// LAYOUT-NOT: "nn.transpose"

// SCHEDULE-LABEL: func.func @main
// SCHEDULE: linalg.transpose ins(%arg0 : tensor<1x8x12x10xf32>) {{.*}} permutation = [0, 2, 3, 1]
// SCHEDULE-NOT: permutation = [0, 3, 1, 2]
// SCHEDULE-NOT: permutation = [0, 2, 3, 1]
// SCHEDULE: linalg.conv_2d_nhwc_hwcf
// SCHEDULE-NOT: permutation = [0, 3, 1, 2]
// SCHEDULE-NOT: permutation = [0, 2, 3, 1]
// SCHEDULE: linalg.conv_2d_nhwc_hwcf
// SCHEDULE-NOT: permutation = [0, 3, 1, 2]
// SCHEDULE: linalg.pooling_nhwc_max
// SCHEDULE: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// SCHEDULE-NOT: linalg.transpose ins(%{{.+}} : tensor<1x
func.func @main(%x: tensor<1x8x12x10xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x6x5xf32> {
  %a = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x10xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x12x10xf32>
  %r = "nn.relu"(%a) : (tensor<1x8x12x10xf32>) -> tensor<1x8x12x10xf32>
  %b = "nn.conv2d"(%r, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x10xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x12x10xf32>
  %p = "nn.max_pool2d"(%b) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x12x10xf32>) -> tensor<1x8x6x5xf32>
  return %p : tensor<1x8x6x5xf32>
}
