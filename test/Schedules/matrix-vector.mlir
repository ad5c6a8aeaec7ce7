// Contractions with fewer rows than the packed register tile (8 rows with
// 32 vector registers) are matrix-vector products: B is read in place, in
// blocks of 8 of its rows, no operand is packed, and the op is split along
// C's columns into the strips the threads share, the whole strips left and
// the last columns (lamina.schedules.matrix_vector).
// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --convert-nn-to-linalg --canonicalize --linalg-fuse-elementwise-ops --cse --canonicalize --nn-inline-fused --cpu-schedule='threads=2 vector-bits=512' | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5,threads=2 --emit=tiled | FileCheck %s --check-prefix=TILED

// A classifier's last layer at batch 1: 1000 columns are 14 strips of 64
// (4 vectors) for the two threads (448 columns each), one strip on one
// thread, and 40 columns.
// CHECK-LABEL: func.func @classifier
// CHECK: transform.named_sequence @schedule_classifier_op0_contraction
// CHECK-NOT: transform.structured.pack
// CHECK: %[[FIRST:.+]] = transform.structured.split %{{.+}} after 896 {{ *}}{dimension = 1 : i64}
// CHECK: %[[PARTS:.+]]:2 = transform.split_handle %[[FIRST]]
// CHECK: %[[SECOND:.+]] = transform.structured.split %[[PARTS]]#1 after 64 {{ *}}{dimension = 1 : i64}
// CHECK: %[[LAST:.+]]:2 = transform.split_handle %[[SECOND]]
// CHECK: transform.structured.tile_using_forall %[[PARTS]]#0 tile_sizes [0, 448, 0]
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [0, 0, 8]
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [0, 64, 0]
// CHECK: transform.structured.vectorize
// CHECK: transform.structured.tile_using_for %[[LAST]]#0 tile_sizes [0, 0, 8]
// CHECK: transform.structured.tile_using_for %[[LAST]]#1 tile_sizes [0, 0, 8]

// Each step adds 8 rows of B's strip, times A's 8 elements, to C's strip.
// TILED-LABEL: func.func @classifier
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: vector.contract {{.+}} : vector<1x8xf32>, vector<8x64xf32> into vector<1x64xf32>
// TILED: scf.forall.in_parallel
// TILED: vector.contract {{.+}} : vector<1x8xf32>, vector<8x64xf32> into vector<1x64xf32>
// TILED: vector.contract {{.+}} : vector<1x8xf32>, vector<8x40xf32> into vector<1x40xf32>
// TILED-NOT: linalg.pack
// TILED-NOT: linalg.matmul
func.func @classifier(%x: tensor<1x1280xf32>, %w: tensor<1280x1000xf32>) -> tensor<1x1000xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<1x1280xf32>, tensor<1280x1000xf32>) -> tensor<1x1000xf32>
  return %0 : tensor<1x1000xf32>
}

// -----

// Three rows, k of 6 (blocks of 2 rows of B divide it), 48 columns: one
// strip of 3 vectors, on one thread, with a bias over the columns as a
// loop nest of its own.
// CHECK-LABEL: func.func @three_rows
// CHECK: transform.named_sequence @schedule_three_rows_fusion_0_contraction
// CHECK-NOT: transform.structured.pack
// CHECK-NOT: transform.structured.split
// CHECK-NOT: tile_using_forall
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [0, 0, 2]
// TILED-LABEL: func.func @three_rows
// TILED: vector.contract {{.+}} : vector<3x2xf32>, vector<2x48xf32> into vector<3x48xf32>
func.func @three_rows(%x: tensor<3x6xf32>, %w: tensor<6x48xf32>, %b: tensor<48xf32>) -> tensor<3x48xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<3x6xf32>, tensor<6x48xf32>) -> tensor<3x48xf32>
  %1 = "nn.add"(%0, %b) : (tensor<3x48xf32>, tensor<48xf32>) -> tensor<3x48xf32>
  return %1 : tensor<3x48xf32>
}
