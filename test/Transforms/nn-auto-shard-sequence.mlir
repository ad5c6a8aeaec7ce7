// Attention split along its sequence (strategy=sequence-parallel): each
// rank's queries, the keys and values gathered (the softmax runs over all
// keys), which upstream's partitioning inserts from the annotations alone.
// RUN: lamina-opt %s --nn-auto-shard='grid=2 strategy=sequence-parallel' --convert-nn-to-linalg \
// RUN:   | mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation),cse,func.func(shard-partition))' \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%{{.+}}: tensor<4x4x16xf32>, %[[K:[^:]+]]: tensor<4x4x16xf32>, %[[V:[^:]+]]: tensor<4x4x16xf32>) -> tensor<4x4x16xf32>
// CHECK-DAG: shard.all_gather %[[K]] on @grid grid_axes = [0] gather_axis = 1 : tensor<4x4x16xf32> -> tensor<4x8x16xf32>
// CHECK-DAG: shard.all_gather %[[V]] on @grid grid_axes = [0] gather_axis = 1 : tensor<4x4x16xf32> -> tensor<4x8x16xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: return
func.func @attention(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}
