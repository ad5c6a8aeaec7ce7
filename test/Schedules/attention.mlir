// Flash-style attention on the CPU: the lowering's tiles (queries in a
// scf.forall over batch x heads, an online softmax over key tiles in a
// scf.for carrying the running maximum, sum and output), the schedule of
// its loop body and the vector code it becomes.
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg='attention-query-tile=8 attention-key-tile=128' | FileCheck %s
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg='attention-query-tile=8 attention-key-tile=128' --canonicalize --cse --cpu-schedule='threads=2 vector-bits=512' | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg='attention-query-tile=8 attention-key-tile=128' --canonicalize --cse --cpu-schedule='threads=2 vector-bits=512' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=TILED
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg | FileCheck %s --check-prefix=ROWS
// RUN: lamina-compile %s --target=cpu:threads=2 --emit=tiled | FileCheck %s --check-prefix=COMPILE

// 8 heads of 64 queries, 256 keys: 8 x 8 query tiles of 8 rows, two key
// tiles of 128. k is transposed tile by tile into [heads, key tiles, D,
// 128] and scaled (1/sqrt(32)) on the way; q is read as it is; the scores
// are one [8, 128] tile.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x64x32xf32>, %[[K:.+]]: tensor<2x4x256x32xf32>, %[[V:.+]]: tensor<2x4x256x32xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[QS:.+]] = tensor.collapse_shape %[[Q]]
// CHECK-NOT: linalg.generic
// CHECK: %[[KT:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<8x2x128x32xf32>) outs(%{{.+}} : tensor<8x2x32x128xf32>)
// CHECK: arith.constant 0.176776692 : f32
// CHECK: arith.mulf
// CHECK: %[[OUT:.+]] = scf.forall (%[[HEAD:.+]], %[[TILE:.+]]) in (8, 8) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<8x64x32xf32>)
// CHECK: tensor.extract_slice %[[QS]][%[[HEAD]], %{{.+}}, 0] [1, 8, 32] [1, 1, 1] : tensor<8x64x32xf32> to tensor<8x32xf32>
// CHECK: %[[KEYS:.+]]:5 = scf.for %[[KEY:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[PEAK:[^ ]+]] = %{{.+}}, %[[TOTAL:[^ ]+]] = %{{.+}}, %[[ACC:[^ ]+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<8xf32>, tensor<8xf32>, tensor<8x32xf32>, tensor<8x128xf32>, tensor<8xf32>)
// CHECK: tensor.extract_slice %[[KT]][%[[HEAD]], %{{.+}}, 0, 0] [1, 1, 32, 128] [1, 1, 1, 1] : tensor<8x2x32x128xf32> to tensor<32x128xf32>
// CHECK: %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.+}} : tensor<8x128xf32>)
// CHECK: %[[TILE_MAX:.+]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8x128xf32>)
// CHECK: arith.maximumf
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[PEAK]], %[[TILE_MAX]] : tensor<8xf32>, tensor<8xf32>) outs(%[[S]] : tensor<8x128xf32>)
// CHECK: math.exp
// CHECK: %[[RUNNING:.+]]:2 = linalg.generic {{.*}} outs(%[[PEAK]], %[[TILE_MAX]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: math.exp
// CHECK: %[[SCALED_TOTAL:.+]] = linalg.generic {{.*}} ins(%[[RUNNING]]#1 : tensor<8xf32>) outs(%[[TOTAL]] : tensor<8xf32>)
// CHECK: %[[NEW_TOTAL:.+]] = linalg.generic {{.*}} ins(%[[P]] : tensor<8x128xf32>) outs(%[[SCALED_TOTAL]] : tensor<8xf32>)
// CHECK: %[[V_TILE:.+]] = tensor.extract_slice %{{.+}}[%[[HEAD]], %[[KEY]], 0] [1, 128, 32] [1, 1, 1] : tensor<8x256x32xf32> to tensor<128x32xf32>
// CHECK: %[[SCALED:.+]] = linalg.generic {{.*}} ins(%[[RUNNING]]#1 : tensor<8xf32>) outs(%[[ACC]] : tensor<8x32xf32>)
// CHECK: %[[NEW_ACC:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[V_TILE]] : tensor<8x128xf32>, tensor<128x32xf32>) outs(%[[SCALED]] : tensor<8x32xf32>)
// CHECK: scf.yield %[[RUNNING]]#0, %[[NEW_TOTAL]], %[[NEW_ACC]], %[[P]], %[[RUNNING]]#1
// CHECK: linalg.generic {{.*}} ins(%[[KEYS]]#2, %[[KEYS]]#1 : tensor<8x32xf32>, tensor<8xf32>)
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.batch_matmul

// The loop body's ops are vectorised where they are: both products as
// 8 x 32 register tiles over their reduction dim, accumulators hoisted;
// the exponentials and row sums one vector of 16 at a time.
// SCHEDULE-LABEL: func.func @attention
// SCHEDULE: transform.named_sequence @schedule_attention_loop0
// SCHEDULE: %[[QK:.+]], %[[QK_LOOPS:.+]]:2 = transform.structured.tile_using_for %{{.+}} tile_sizes [0, 32, 1]
// SCHEDULE-NEXT: transform.structured.vectorize %[[QK]]
// SCHEDULE: transform.apply_patterns.vector.reduction_to_contract
// SCHEDULE: transform.apply_licm to %[[QK_LOOPS]]#1
// SCHEDULE-NEXT: transform.loop.hoist_loop_invariant_subsets %[[QK_LOOPS]]#1
// SCHEDULE: transform.structured.tile_reduction_using_for {{.*}} by tile_sizes = [0, 16]
// SCHEDULE: %[[PV:.+]], %[[PV_LOOP:.+]] = transform.structured.tile_using_for %{{.+}} tile_sizes [0, 0, 1]
// SCHEDULE: transform.loop.hoist_loop_invariant_subsets %[[PV_LOOP]]
// SCHEDULE: transform.include @schedule_attention_loop0 failures(suppress)

// TILED-LABEL: func.func @attention
// TILED: scf.forall (%{{.+}}, %{{.+}}) in (8, 8)
// TILED: scf.for {{.*}} -> (tensor<8xf32>, tensor<8xf32>, tensor<8x32xf32>, tensor<8x128xf32>, tensor<8xf32>)
// TILED: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8x32xf32>)
// TILED: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// TILED: math.exp %{{.+}} : vector<1x16xf32>
// TILED: vector.multi_reduction <add>
// TILED: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (vector<8x32xf32>)
// TILED: vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// TILED: scf.forall.in_parallel
// TILED-NOT: lamina.schedule

// Without query tiles, attention lowers to whole rows of scores.
// ROWS-LABEL: func.func @attention
// ROWS-NOT: scf.forall
// ROWS: linalg.batch_matmul
// ROWS-SAME: tensor<8x64x256xf32>

// COMPILE-LABEL: func.func @attention
// COMPILE: scf.forall
// COMPILE: scf.for
// COMPILE: vector.contract
// COMPILE: math.exp %{{.+}} : vector<
func.func @attention(%q: tensor<2x4x64x32xf32>, %k: tensor<2x4x256x32xf32>, %v: tensor<2x4x256x32xf32>) -> tensor<2x4x64x32xf32> {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x4x64x32xf32>, tensor<2x4x256x32xf32>, tensor<2x4x256x32xf32>) -> tensor<2x4x64x32xf32>
  return %0 : tensor<2x4x64x32xf32>
}

// -----

// 37 queries and keys: queries padded to 40 (5 tiles), keys to one tile of
// 64 (a multiple of 32), value columns to 32; padded keys and later keys
// are -inf, and causal key tiles stop at the query tile's diagonal. The
// iterations take light and heavy query tiles in turn (0, 4, 1, 3, 2).
// CHECK-LABEL: func.func @causal_padded
// CHECK: tensor.pad %{{.+}} low[0, 0, 0] high[0, 3, 0]
// CHECK: tensor<3x37x16xf32> to tensor<3x40x16xf32>
// CHECK: tensor.pad %{{.+}} low[0, 0, 0] high[0, 27, 0]
// CHECK: tensor.pad %{{.+}} low[0, 0, 0] high[0, 27, 8]
// CHECK: tensor<3x37x24xf32> to tensor<3x64x32xf32>
// CHECK: scf.forall (%{{.+}}, %[[ITERATION:.+]]) in (3, 5)
// CHECK: %[[HALF:.+]] = arith.divui %[[ITERATION]], %{{.+}} : index
// CHECK: %[[PARITY:.+]] = arith.remui %[[ITERATION]], %{{.+}} : index
// CHECK: %[[EVEN:.+]] = arith.cmpi eq, %[[PARITY]], %{{.+}} : index
// CHECK: %[[FROM_END:.+]] = arith.subi %{{.+}}, %[[HALF]] : index
// CHECK: %[[TILE:.+]] = arith.select %[[EVEN]], %[[HALF]], %[[FROM_END]] : index
// CHECK: %[[ROW:.+]] = arith.muli %[[TILE]], %{{.+}} : index
// CHECK: %[[REACHED:.+]] = arith.muli
// CHECK: %[[UPPER:.+]] = arith.minui %[[REACHED]], %{{.+}} : index
// CHECK: scf.for %[[KEY:.+]] = %{{.+}} to %[[UPPER]] step
// CHECK: %[[J:.+]] = arith.addi %{{.+}}, %[[KEY]] : index
// CHECK: %[[PADDED:.+]] = arith.cmpi uge, %[[J]], %{{.+}} : index
// CHECK: %[[I:.+]] = arith.addi %{{.+}}, %[[ROW]] : index
// CHECK: %[[LATER:.+]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: %[[HIDDEN:.+]] = arith.ori %[[PADDED]], %[[LATER]] : i1
// CHECK: arith.select %[[HIDDEN]], %{{.+}}, %{{.+}} : f32
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [3, 37, 24] [1, 1, 1] : tensor<3x40x32xf32> to tensor<3x37x24xf32>
func.func @causal_padded(%q: tensor<3x37x16xf32>, %k: tensor<3x37x16xf32>, %v: tensor<3x37x24xf32>) -> tensor<3x37x24xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<3x37x16xf32>, tensor<3x37x16xf32>, tensor<3x37x24xf32>) -> tensor<3x37x24xf32>
  return %0 : tensor<3x37x24xf32>
}

// -----

// f16 keys, values and mask are widened once, outside the loops, q inside
// the product; the mask's tile is added to the scores, and a row whose
// keys so far are all masked takes its exponentials from 0; the output
// tile is rounded to f16.
// CHECK-LABEL: func.func @masked_f16
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<16x64xf16>
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: %[[MASK_F32:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x16x64xf32>)
// CHECK: scf.forall
// CHECK: scf.for %[[KEY:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8x16xf16>, tensor<16x64xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[MASK_TILE:.+]] = tensor.extract_slice %[[MASK_F32]][0, %{{.+}}, %[[KEY]]] [1, 8, 64] [1, 1, 1] : tensor<1x16x64xf32> to tensor<8x64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[MASK_TILE]] : tensor<8x64xf32>)
// CHECK: arith.addf
// CHECK: arith.cmpf oeq, %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: tensor.parallel_insert_slice %{{.+}} : tensor<8x16xf16> into tensor<2x16x16xf16>
func.func @masked_f16(%q: tensor<2x16x16xf16>, %k: tensor<2x64x16xf16>, %v: tensor<2x64x16xf16>, %m: tensor<16x64xf16>) -> tensor<2x16x16xf16> {
  %0 = "nn.attention"(%q, %k, %v, %m) {scale = 0.5 : f32} : (tensor<2x16x16xf16>, tensor<2x64x16xf16>, tensor<2x64x16xf16>, tensor<16x64xf16>) -> tensor<2x16x16xf16>
  return %0 : tensor<2x16x16xf16>
}

// -----

// A padding mask [B, 1, 1, Sk] is read in place, one row of keys per batch:
// its batch is the head index over the 3 heads, broadcast over the rows.
// CHECK-DAG: #[[$KEYS_ONLY:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @padding_mask
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<2x1x1x64xf32>
// CHECK: %[[MASKS:.+]] = tensor.collapse_shape %[[MASK]] {{\[}}[0], [1], [2, 3]] : tensor<2x1x1x64xf32> into tensor<2x1x64xf32>
// CHECK-NOT: tensor<6x16x64xf32>
// CHECK: scf.forall (%[[HEAD:.+]], %{{.+}}) in (6, 2)
// CHECK: scf.for %[[KEY:[^ ]+]] =
// CHECK: %[[OUTER:.+]] = arith.divui %[[HEAD]], %{{.+}} : index
// CHECK: arith.remui %[[OUTER]], %{{.+}} : index
// CHECK: %[[ROW:.+]] = tensor.extract_slice %[[MASKS]][%{{.+}}, 0, %[[KEY]]] [1, 1, 64] [1, 1, 1] : tensor<2x1x64xf32> to tensor<64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$KEYS_ONLY]], #{{.+}}], {{.*}} ins(%[[ROW]] : tensor<64xf32>)
func.func @padding_mask(%q: tensor<2x3x16x16xf32>, %k: tensor<2x3x64x16xf32>, %v: tensor<2x3x64x16xf32>, %m: tensor<2x1x1x64xf32>) -> tensor<2x3x16x16xf32> {
  %0 = "nn.attention"(%q, %k, %v, %m) : (tensor<2x3x16x16xf32>, tensor<2x3x64x16xf32>, tensor<2x3x64x16xf32>, tensor<2x1x1x64xf32>) -> tensor<2x3x16x16xf32>
  return %0 : tensor<2x3x16x16xf32>
}

// -----

// ViT's 197 keys: one step of 224 keys rather than two of 128, which would
// pad them to 256 (a quarter of the products' work more, and a step's
// rescaling).
// CHECK-LABEL: func.func @vit_keys
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<12x1x64x224xf32>)
// CHECK: scf.for {{.*}} -> (tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>, tensor<8x224xf32>, tensor<8xf32>)
func.func @vit_keys(%q: tensor<1x12x197x64xf32>, %k: tensor<1x12x197x64xf32>, %v: tensor<1x12x197x64xf32>) -> tensor<1x12x197x64xf32> {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<1x12x197x64xf32>, tensor<1x12x197x64xf32>, tensor<1x12x197x64xf32>) -> tensor<1x12x197x64xf32>
  return %0 : tensor<1x12x197x64xf32>
}
