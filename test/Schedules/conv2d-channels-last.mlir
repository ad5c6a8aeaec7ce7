// A convolution becomes img2col and a contraction (upstream's
// convert_conv2d_to_img2col) before its schedule is chosen: the window
// matrix is packed in 32-pixel panels, the threads share the panels, and
// the 8x32 register tile of FMAs runs over output channels x pixels; the
// epilogue of the convolution's fusion group stays in the group.
// RUN: lamina-opt %s --cpu-schedule='threads=2' | FileCheck %s
// RUN: lamina-opt %s --cpu-schedule='threads=2' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=TILED

// The rewrite refuses dilations: that convolution stays one, the others
// of the module are rewritten.
// CHECK-LABEL: func.func @dilated
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}dilations = dense<2>
// CHECK-NOT: lamina.img2col

// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.fill {{.*}} -> tensor<1x16x256xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<1x8x18x18xf32>) outs(%{{.+}} : tensor<1x72x256xf32>)
// CHECK-SAME: lamina.fusion_group = "g0"
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<16x72xf32>, tensor<1x72x256xf32>) outs(%{{.+}} : tensor<1x16x256xf32>)
// CHECK-SAME: lamina.fusion_group = "g0"
// CHECK-SAME: lamina.schedule = "[[MM:conv_g0/0]]"
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-SAME: lamina.schedule = "[[EPILOGUE:conv_g0/1]]"
// CHECK: arith.maximumf
// CHECK: transform.named_sequence @schedule_conv_g0_contraction
// CHECK: %[[OP:.+]] = transform.structured.match attributes {lamina.schedule = "[[MM]]"}
// CHECK: transform.structured.pack %[[OP]] packed_sizes = [0, 0, 32, 0]
// CHECK: transform.structured.pack_transpose {{.*}} outer_perm = [0, 2, 1]
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 0, 4, 0, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 8, 1, 1, 0]
// CHECK: transform.structured.vectorize
// CHECK: transform.loop.hoist_loop_invariant_subsets
// CHECK: transform.named_sequence @schedule_conv_g0(
// CHECK: transform.structured.match attributes {lamina.schedule = "[[EPILOGUE]]"}
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 1, 1, 0]

// TILED-LABEL: func.func @conv
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: scf.for {{.*}} -> (vector<1x8x1x32xf32>)
// TILED: vector.contract
// TILED-NOT: transform.

func.func @dilated(%x: tensor<1x8x18x18xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %c : tensor<1x16x14x14xf32>
}

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv(%x: tensor<1x8x18x18xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %f = linalg.fill {lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%cst : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%x, %w : tensor<1x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"], lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%c, %b : tensor<1x16x16x16xf32>, tensor<16xf32>) outs(%e : tensor<1x16x16x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}
