// RUN: lamina-opt %s --split-input-file --func-copy-repeated-results | FileCheck %s
// The upstream pass that ends the process on a repeated result runs after it:
// RUN: lamina-opt %s --split-input-file --func-copy-repeated-results \
// RUN:   | mlir-opt --split-input-file --buffer-results-to-out-params="hoist-static-allocs modify-public-functions" \
// RUN:   | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @twice
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[COPY:.+]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[COPY]]
// CHECK: return %[[A]], %[[COPY]]
// OUT-LABEL: func.func @twice
// OUT-SAME: (%[[OUT0:.+]]: memref<4xf32>, %[[OUT1:.+]]: memref<4xf32>)
// OUT: memref.copy %[[OUT0]], %[[OUT1]]
func.func @twice() -> (memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a : memref<4xf32>, memref<4xf32>
}

// -----

// Three times: two copies; a result returned once is left alone.
// CHECK-LABEL: func.func @three_times
// CHECK-SAME: (%[[X:.+]]: memref<2x3xf16>)
// CHECK: %[[A:.+]] = memref.alloc() : memref<2x3xf16>
// CHECK: %[[C1:.+]] = memref.alloc() : memref<2x3xf16>
// CHECK: memref.copy %[[A]], %[[C1]]
// CHECK: %[[C2:.+]] = memref.alloc() : memref<2x3xf16>
// CHECK: memref.copy %[[A]], %[[C2]]
// CHECK: return %[[A]], %[[X]], %[[C1]], %[[C2]]
func.func @three_times(%x: memref<2x3xf16>) -> (memref<2x3xf16>, memref<2x3xf16>, memref<2x3xf16>, memref<2x3xf16>) {
  %a = memref.alloc() : memref<2x3xf16>
  return %a, %x, %a, %a : memref<2x3xf16>, memref<2x3xf16>, memref<2x3xf16>, memref<2x3xf16>
}

// -----

// Distinct results, scalars and dynamic shapes are not copied.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.copy
// CHECK: return
func.func @left_alone(%x: memref<?xf32>, %s: f32) -> (memref<?xf32>, memref<?xf32>, f32, f32, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %x, %x, %s, %s, %a : memref<?xf32>, memref<?xf32>, f32, f32, memref<4xf32>
}
