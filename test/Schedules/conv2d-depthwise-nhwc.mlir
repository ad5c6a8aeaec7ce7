// A channels-last depthwise convolution (one filter per channel) with its
// bias and relu, through the CPU pipeline: convert-nn-to-linalg makes it a
// linalg.depthwise_conv_2d_nhwc_hwc on the NHWC input (no transpose of the
// activations), cpu-split-padded-convolutions splits it (with its fill and
// epilogue) into the top and bottom rows and the left and right columns
// (4 wide: half a register tile), which pad the few rows or columns of
// the input they read, and the 54x48 interior, which reads the input in
// place; the direct schedule tiles each
// part into register tiles of output pixels x 32 channels, which
// upstream's decomposition makes 1-D depthwise convolutions and vectorises
// into FMAs on vectors of channels; the bias and relu run on each tile's
// accumulators (the epilogue's last op is tiled, the convolution and its
// zero fill fused into its tiles).
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=schedule | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: lamina-run %s --target=cpu:threads=2 --random --check | FileCheck %s --check-prefix=NUMERIC
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// CHECK-LABEL: func.func @main
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: tensor.pad %arg0
// The top row: a padded slice of the first two input rows.
// CHECK: %[[TOP:.+]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 56, 64]
// CHECK: tensor.pad %[[TOP]] low[0, 1, 1, 0] high[0, 0, 1, 0]
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} -> tensor<1x1x56x64xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0, 0] [1, 1, 56, 64]
// The left column, then the interior, reading the input as it is.
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 0] [1, 56, 5, 64]
// CHECK: tensor.insert_slice {{.*}}[0, 1, 0, 0] [1, 54, 4, 64]
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %arg0[0, 0, 3, 0] [1, 56, 50, 64]
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill {{.*}}lamina.schedule = "[[FILL:main_[^"]+]]"
// CHECK-NEXT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}}lamina.schedule = "[[CONV:main_[^"]+]]"
// CHECK-SAME: ins(%[[INTERIOR]], %{{.+}} : tensor<1x56x50x64xf32>, tensor<3x3x64xf32>)
// CHECK-SAME: -> tensor<1x54x48x64xf32>
// CHECK: linalg.generic {{.*}}lamina.schedule = "[[EPILOGUE:main_[^"]+]]"
// CHECK: arith.maximumf
// CHECK: tensor.insert_slice {{.*}}[0, 1, 4, 0] [1, 54, 48, 64]
// The right column and the bottom row.
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: tensor.insert_slice {{.*}}[0, 1, 52, 0] [1, 54, 4, 64]
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.insert_slice {{.*}}[0, 55, 0, 0] [1, 1, 56, 64]
// Each part is scheduled as a convolution with its epilogue. The interior
// (loops n, oh, ow, c, kh, kw): two threads share its 54 rows; its
// register tile is 8 pixels x 32 channels, into which the convolution and
// its fill are fused, one filter row at a time.
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution0
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution1
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution2
// CHECK-DAG: %[[LAST:.+]] = transform.structured.match attributes {lamina.schedule = "[[EPILOGUE]]"}
// CHECK-DAG: %[[C:.+]] = transform.structured.match attributes {lamina.schedule = "[[CONV]]"}
// CHECK-DAG: %[[F:.+]] = transform.structured.match attributes {lamina.schedule = "[[FILL]]"}
// CHECK: transform.structured.tile_using_forall %[[LAST]] tile_sizes [0, 27, 0, 0]
// CHECK: transform.structured.fuse_into_containing_op %[[C]]
// CHECK: transform.structured.fuse_into_containing_op %[[F]]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 8, 32]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 0, 0, 0, 1, 0]
// CHECK: transform.structured.decompose
// CHECK: transform.structured.vectorize
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution3
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution4

// The interior's tiles: its rows over two threads, 8 pixels x 32 channels
// accumulated in registers, the relu on the accumulators before the store.
// TILED-LABEL: func.func @main
// TILED-NOT: linalg.depthwise_conv
// TILED: scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x54x48x64xf32>)
// TILED: scf.for {{.*}} -> (vector<1x8x32xf32>)
// TILED-COUNT-3: vector.fma
// TILED: arith.maximumf {{.+}} : vector<1x1x8x32xf32>
// TILED-NEXT: vector.transfer_write
// TILED: scf.forall.in_parallel
// TILED-NOT: linalg.depthwise_conv
// TILED-NOT: transform.

// NUMERIC: check: all results match the reference

func.func @main(%x: tensor<1x56x56x64xf32>, %w: tensor<64x1x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x56x56x64xf32> {
  %y = "nn.conv2d"(%x, %w, %b) {groups = 64 : i64, padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x56x56x64xf32>, tensor<64x1x3x3xf32>, tensor<64xf32>) -> tensor<1x56x56x64xf32>
  %r = "nn.relu"(%y) : (tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %r : tensor<1x56x56x64xf32>
}
