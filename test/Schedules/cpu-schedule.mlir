// The schedules chosen for linalg on tensors, as transform IR, and the
// payload once the script has run.
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=2' | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=2' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=TILED
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=ONE

// A matmul: B packed in 32-column panels before k, split over two threads,
// cache tiles, then an 8x32 register tile of FMAs on vectors.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.fill {lamina.schedule = "[[FILL:matmul_op0/0]]"}
// CHECK: linalg.matmul {lamina.schedule = "[[MM:matmul_op0/1]]"}
// CHECK: module @lamina_schedule attributes {transform.with_named_sequence}
// CHECK: transform.named_sequence @schedule_matmul_op0_contraction
// CHECK: %[[OP:.+]] = transform.structured.match attributes {lamina.schedule = "[[MM]]"}
// CHECK: transform.structured.pack %[[OP]] packed_sizes = [0, 32, 0]
// CHECK: transform.structured.pack_transpose {{.*}} outer_perm = [1, 0]
// CHECK: transform.structured.lower_pack
// CHECK: transform.structured.lower_unpack
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 8, 0, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 8, {{[0-9]+}}, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [8, 1, 1, 0]
// CHECK: transform.structured.vectorize
// CHECK: transform.apply_patterns.vector.reduction_to_contract
// CHECK: transform.loop.hoist_loop_invariant_subsets
// CHECK: transform.named_sequence @__transform_main
// CHECK-NEXT: transform.include @schedule_matmul_op0_contraction failures(suppress)

// TILED-LABEL: func.func @matmul
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8x1x32xf32>)
// TILED: vector.contract {{.*}} : vector<8x1xf32>, vector<1x1x32xf32> into vector<8x1x32xf32>
// TILED-NOT: linalg.matmul
// TILED-NOT: lamina.schedule
// TILED-NOT: transform.

// ONE-LABEL: func.func @matmul
// ONE-NOT: scf.forall (%{{.+}}) in (2)
// ONE: vector.contract
func.func @matmul(%a: tensor<256x512xf32>, %b: tensor<512x512xf32>) -> tensor<256x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x512xf32>)
                     outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}

// -----

// A fusion group (the markers of nn-inline-fused): the row reduction and
// its fill are fused into the rows of the consumer, which threads share;
// each op is vectorised along the row, the reduction into 64 partial sums.
// CHECK-LABEL: func.func @row_group
// CHECK: transform.named_sequence @schedule_row_group_fusion_0
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [1, 0]
// CHECK: transform.apply_patterns.tensor.bubble_up_extract_slice
// CHECK: transform.structured.fuse_into_containing_op
// CHECK: transform.structured.fuse_into_containing_op
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [1, 64]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [1, 0]
// CHECK: transform.structured.tile_reduction_using_for {{.*}} by tile_sizes = [0, 64]
// CHECK: transform.loop.hoist_loop_invariant_subsets

// TILED-LABEL: func.func @row_group
// TILED: scf.forall (%[[ROW:.+]]) in (32)
// TILED: scf.for {{.*}} -> (vector<1x64xf32>)
// TILED: arith.addf {{.*}} : vector<1x64xf32>
// TILED: vector.multi_reduction <add>
// TILED: arith.divf {{.*}} : vector<1x64xf32>
// TILED: tensor.parallel_insert_slice
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_group(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %zero = arith.constant {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "reduction"} 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "reduction"}
      ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x256xf32>) outs(%init : tensor<32xf32>)
      attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "reduction"} {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %o = tensor.empty() : tensor<32x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<32x256xf32>, tensor<32xf32>) outs(%o : tensor<32x256xf32>)
      attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "reduction"} {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.divf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<32x256xf32>
  return %r : tensor<32x256xf32>
}

// -----

// Not scheduled: i1 tensors (element by element in the loops stage).
// CHECK-LABEL: func.func @booleans
// CHECK-NOT: lamina.schedule
// CHECK: transform.named_sequence @__transform_main
// CHECK-NEXT: transform.yield
#v = affine_map<(i) -> (i)>
func.func @booleans(%a: tensor<16xi1>) -> tensor<16xi1> {
  %e = tensor.empty() : tensor<16xi1>
  %r = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : tensor<16xi1>) outs(%e : tensor<16xi1>) {
  ^bb0(%x: i1, %o: i1):
    %n = arith.xori %x, %x : i1
    linalg.yield %n : i1
  } -> tensor<16xi1>
  return %r : tensor<16xi1>
}

// -----

// A tuned choice on the group's ops (what lamina.tuning writes from the
// tuning cache): the model with 16 vector registers gives a register tile
// of 4 rows instead of 8; the choice goes with the tags.
// CHECK-LABEL: func.func @tuned_choice
// CHECK: linalg.matmul {lamina.schedule = "[[MM:tuned_choice_op0/1]]", lamina.schedule_choice = {vector_registers = 16 : i64}}
// CHECK: transform.named_sequence @schedule_tuned_choice_op0_contraction
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [4, 1, 1, 0]

// TILED-LABEL: func.func @tuned_choice
// TILED: vector.contract {{.*}} into vector<4x1x32xf32>
// TILED-NOT: lamina.schedule_choice
func.func @tuned_choice(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill {lamina.schedule_choice = {vector_registers = 16 : i64}} ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul {lamina.schedule_choice = {vector_registers = 16 : i64}}
                     ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
