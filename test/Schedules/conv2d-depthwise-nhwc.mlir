// A channels-last depthwise convolution (one filter per channel) with its
// bias and relu, through the CPU pipeline: convert-nn-to-linalg makes it a
// linalg.depthwise_conv_2d_nhwc_hwc on the NHWC input (no transpose of the
// activations), and the direct schedule tiles it into register tiles of 8
// output pixels x 32 channels, which upstream's decomposition makes 1-D
// depthwise convolutions and vectorises into FMAs on vectors of channels;
// the bias and relu run on each tile's accumulators (the epilogue's last
// op is tiled, the convolution and its zero fill fused into its tiles).
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=schedule | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: lamina-run %s --target=cpu:threads=2 --random --check | FileCheck %s --check-prefix=NUMERIC
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// CHECK-LABEL: func.func @main
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: linalg.fill {{.*}}lamina.schedule = "[[FILL:main_[^"]+]]"
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}}lamina.schedule = "[[CONV:main_[^"]+]]"
// CHECK-SAME: tensor<1x58x58x64xf32>, tensor<3x3x64xf32>
// CHECK-SAME: -> tensor<1x56x56x64xf32>
// CHECK: linalg.generic {{.*}}lamina.schedule = "[[EPILOGUE:main_[^"]+]]"
// CHECK: arith.maximumf
// Loops (n, oh, ow, c, kh, kw): two threads share the 56 rows of the
// epilogue; its register tile is 8 pixels x 32 channels, into which the
// convolution and its fill are fused, one filter row at a time.
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution
// CHECK-DAG: %[[LAST:.+]] = transform.structured.match attributes {lamina.schedule = "[[EPILOGUE]]"}
// CHECK-DAG: %[[C:.+]] = transform.structured.match attributes {lamina.schedule = "[[CONV]]"}
// CHECK-DAG: %[[F:.+]] = transform.structured.match attributes {lamina.schedule = "[[FILL]]"}
// CHECK: transform.structured.tile_using_forall %[[LAST]] tile_sizes [0, 28, 0, 0]
// CHECK: transform.structured.fuse_into_containing_op %[[C]]
// CHECK: transform.structured.fuse_into_containing_op %[[F]]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 8, 32]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 0, 0, 0, 1, 0]
// CHECK: transform.structured.decompose
// CHECK: transform.structured.vectorize

// TILED-LABEL: func.func @main
// TILED-NOT: linalg.depthwise_conv
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: scf.for {{.*}} -> (vector<1x8x32xf32>)
// TILED-COUNT-3: vector.fma
// TILED: arith.maximumf {{.+}} : vector<1x1x8x32xf32>
// TILED-NEXT: vector.transfer_write
// TILED: scf.forall.in_parallel
// TILED-NOT: scf.forall
// TILED-NOT: transform.

// NUMERIC: check: all results match the reference

func.func @main(%x: tensor<1x56x56x64xf32>, %w: tensor<64x1x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x56x56x64xf32> {
  %y = "nn.conv2d"(%x, %w, %b) {groups = 64 : i64, padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x56x56x64xf32>, tensor<64x1x3x3xf32>, tensor<64xf32>) -> tensor<1x56x56x64xf32>
  %r = "nn.relu"(%y) : (tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %r : tensor<1x56x56x64xf32>
}
