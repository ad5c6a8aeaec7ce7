// An nn convolution with its bias, relu and residual add, through the CPU
// pipeline: `fused` makes them one group, `schedule` rewrites the
// convolution channels-last and gives it the direct schedule, `tiled`
// applies it.
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=schedule | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=tiled | FileCheck %s --check-prefix=TILED
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// CHECK-LABEL: func.func @main
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}lamina.fusion_group = "[[GROUP:.+]]"{{.*}}lamina.schedule = "[[CONV:main_.+]]"
// CHECK-SAME: tensor<1x34x34x32xf32>, tensor<3x3x32x64xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x32x32x64xf32>) outs(%{{.+}} : tensor<1x64x32x32xf32>) permutation = [0, 3, 1, 2]
// CHECK-SAME: lamina.fusion_group = "[[GROUP]]"
// CHECK: arith.maximumf
// CHECK: transform.named_sequence @schedule_{{.+}}_convolution
// CHECK: transform.structured.match attributes {lamina.schedule = "[[CONV]]"}
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 16, 0, 0, 0, 0, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 8, 32, 1, 0, 1]
// CHECK: transform.structured.decompose
// CHECK: transform.structured.vectorize

// TILED-LABEL: func.func @main
// TILED-NOT: linalg.conv
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: scf.for {{.*}} -> (vector<1x8x32xf32>)
// TILED: scf.for {{.*}} -> (vector<1x8x32xf32>)
// TILED-COUNT-3: vector.contract
// TILED-NOT: transform.

func.func @main(%x: tensor<1x32x32x32xf32>, %w: tensor<64x32x3x3xf32>, %b: tensor<64xf32>,
                %r: tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32> {
  %0 = "nn.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x32x32x32xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>) -> tensor<1x64x32x32xf32>
  %1 = "nn.relu"(%0) : (tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %2 = "nn.add"(%1, %r) : (tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  return %2 : tensor<1x64x32x32xf32>
}
