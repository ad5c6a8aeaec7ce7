// Scalable vectors (SVE, `scalable`): an elementwise loop nest steps along
// its contiguous dim by vscale x 16 elements (four vectors of the 128-bit
// minimum), the last step masked, through upstream's scalable tiling and
// masked vectorisation; the masks end up on the transfers themselves.
// What cannot be scalable keeps fixed vectors: an operand broadcast along
// the vector dim (upstream's transfer lowering cannot broadcast to a
// scalable vector) and the other kinds' ops (a matmul's register tile).
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128 vector-registers=32 scalable=true' | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128 vector-registers=32 scalable=true' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=TILED
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128 vector-registers=32' | FileCheck %s --check-prefix=FIXED

// CHECK-LABEL: func.func @add_rows
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [1, [16]]
// CHECK: transform.structured.vectorize %{{.+}} vector_sizes [1, [16]]
// CHECK: transform.apply_patterns.vector.lower_masked_transfers
// TILED-LABEL: func.func @add_rows
// TILED: %[[STEP:.+]] = arith.muli %{{.+}}, %c16 : index
// TILED: scf.for %{{.+}} = %c0 to %c37 step %[[STEP]]
// TILED: %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<1x[16]xi1>
// TILED: vector.transfer_read %{{.+}}, %[[MASK]] {{.*}} vector<1x[16]xf32>
// TILED: arith.addf %{{.+}} : vector<1x[16]xf32>
// TILED: vector.transfer_write %{{.+}}, %[[MASK]] {{.*}} : vector<1x[16]xf32>
// TILED-NOT: vector.mask
// FIXED-LABEL: func.func @add_rows
// FIXED-NOT: [16]]
func.func @add_rows(%a: tensor<5x37xf32>, %b: tensor<37xf32>) -> tensor<5x37xf32> {
  %e = tensor.empty() : tensor<5x37xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<5x37xf32>, tensor<37xf32>) outs(%e : tensor<5x37xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<5x37xf32>
  return %r : tensor<5x37xf32>
}

// -----

// The row's maximum is broadcast along the vector dim: fixed vectors.
// CHECK-LABEL: func.func @subtract_row_max
// CHECK-NOT: [16]]
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [1, 8]
func.func @subtract_row_max(%a: tensor<5x8xf32>, %m: tensor<5xf32>) -> tensor<5x8xf32> {
  %e = tensor.empty() : tensor<5x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %m : tensor<5x8xf32>, tensor<5xf32>) outs(%e : tensor<5x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: [16]]
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [8, 1, 1, 0]
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
