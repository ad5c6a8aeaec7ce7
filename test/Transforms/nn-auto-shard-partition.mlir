// The annotations nn-auto-shard writes are partitioned by upstream alone,
// after Lamina's nn->linalg lowering, into exactly the collectives its
// report counts.
// RUN: lamina-opt %s --split-input-file --nn-auto-shard='grid=2' --convert-nn-to-linalg \
// RUN:   | mlir-opt --split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation),cse,func.func(shard-partition))' \
// RUN:   | FileCheck %s

// Tensor parallel: local weight shapes, one all-reduce of the result.

// CHECK-LABEL: func.func @mlp_small_batch
// CHECK-SAME: (%{{.+}}: tensor<4x16xf32>, %{{.+}}: tensor<16x16xf32>, %{{.+}}: tensor<16xf32>, %{{.+}}: tensor<16x16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: shard.all_reduce %{{.+}} on @grid grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NOT: shard.all_
// CHECK: return
func.func @mlp_small_batch(%x: tensor<4x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %r = "nn.gelu"(%hb) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Data parallel: each rank's rows, the three stored weight halves
// gathered, no all-reduce.

// CHECK-LABEL: func.func @mlp_large_batch
// CHECK-SAME: (%{{.+}}: tensor<32x16xf32>, %{{.+}}: tensor<8x32xf32>, %{{.+}}: tensor<16xf32>, %{{.+}}: tensor<16x16xf32>) -> tensor<32x16xf32>
// CHECK-DAG: shard.all_gather %{{.+}} on @grid grid_axes = [0] gather_axis = 0 : tensor<8x32xf32> -> tensor<16x32xf32>
// CHECK-DAG: shard.all_gather %{{.+}} on @grid grid_axes = [0] gather_axis = 0 : tensor<16xf32> -> tensor<32xf32>
// CHECK-DAG: shard.all_gather %{{.+}} on @grid grid_axes = [0] gather_axis = 0 : tensor<16x16xf32> -> tensor<32x16xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: return
func.func @mlp_large_batch(%x: tensor<64x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %r = "nn.gelu"(%hb) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// Attention over a batch: each rank's sequences, nothing communicated
// (nn-auto-shard-sequence.mlir splits the sequence instead).

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%{{.+}}: tensor<2x8x16xf32>, %{{.+}}: tensor<2x8x16xf32>, %{{.+}}: tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK-NOT: shard.all_
// CHECK: return
func.func @attention(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}

// -----

// Multi-head attention by heads: each rank's head of every weight, the
// layer_norm's scale and shift gathered, one all-reduce of the sum over
// heads.

// CHECK-LABEL: func.func @attention_block
// CHECK-SAME: (%{{.+}}: tensor<8x16xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %{{.+}}: tensor<1x16x8xf32>, %{{.+}}: tensor<1x16x8xf32>, %{{.+}}: tensor<1x16x8xf32>, %{{.+}}: tensor<1x8x16xf32>) -> tensor<8x16xf32>
// CHECK-DAG: shard.all_gather %[[G]] on @grid grid_axes = [0] gather_axis = 0 : tensor<8xf32> -> tensor<16xf32>
// CHECK-DAG: shard.all_gather %[[B]] on @grid grid_axes = [0] gather_axis = 0 : tensor<8xf32> -> tensor<16xf32>
// CHECK: shard.all_reduce %{{.+}} on @grid grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NOT: shard.all_
// CHECK: return
func.func @attention_block(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %wq: tensor<2x16x8xf32>, %wk: tensor<2x16x8xf32>, %wv: tensor<2x16x8xf32>, %wo: tensor<2x8x16xf32>) -> tensor<8x16xf32> {
  %n = "nn.layer_norm"(%x, %g, %b) : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %q = "nn.matmul"(%n, %wq) : (tensor<8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %k = "nn.matmul"(%n, %wk) : (tensor<8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %v = "nn.matmul"(%n, %wv) : (tensor<8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %a = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = "nn.matmul"(%a, %wo) : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %s = "nn.reduce_sum"(%o) {axes = array<i64: 0>} : (tensor<2x8x16xf32>) -> tensor<8x16xf32>
  %y = "nn.add"(%x, %s) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

