// RUN: lamina-opt %s --split-input-file --nn-shard-partition | FileCheck %s

// Megatron column -> row split: local weight shapes and one all-reduce.
// CHECK-LABEL: func.func @column_row
// CHECK-SAME: tensor<8x8xf32> {lamina.split_axes = {{\[\[\], \[0\]\]}}}
// CHECK-SAME: tensor<8x8xf32> {lamina.split_axes = {{\[\[0\]\]}}}
// CHECK-NOT: shard.all_gather
// CHECK: shard.all_reduce %{{.+}} on @g grid_axes = [0] : tensor<4x8xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @column_row(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %w1 to %cols annotate_for_users : tensor<8x16xf32>
  %b = shard.shard %w2 to %rows annotate_for_users : tensor<16x8xf32>
  %h = "nn.matmul"(%x, %a) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = "nn.relu"(%h) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %o = "nn.matmul"(%r, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Data parallel: rows of the batch, replicated weights, no communication.
// CHECK-LABEL: func.func @data_parallel
// CHECK-SAME: tensor<2x8xf32> {lamina.split_axes = {{\[\[0\]\]}}}
// CHECK-SAME: -> (tensor<2x8xf32> {lamina.split_axes = {{\[\[0\]\]}}})
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @data_parallel(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %rows annotate_for_users : tensor<4x8xf32>
  %h = "nn.matmul"(%a, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %p = "nn.softmax"(%h) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// A softmax along its split axis: the row maximum and the row sum are
// partial on each rank, so each is all-reduced (max, then sum).
// CHECK-LABEL: func.func @softmax_split_axis
// CHECK: shard.all_reduce %{{.+}} on @g grid_axes = [0] reduction = max : tensor<4xf32>
// CHECK: shard.all_reduce %{{.+}} on @g grid_axes = [0] : tensor<4xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @softmax_split_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %cols annotate_for_users : tensor<4x8xf32>
  %p = "nn.softmax"(%a) {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// layer_norm over a split axis: the mean and the variance are sums over
// both halves.
// CHECK-LABEL: func.func @layer_norm_split_axis
// CHECK-COUNT-2: shard.all_reduce %{{.+}} on @g grid_axes = [0] : tensor<4xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @layer_norm_split_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %cols annotate_for_users : tensor<4x8xf32>
  %p = "nn.layer_norm"(%a, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// Attention with its heads split: each rank attends with its own heads.
// CHECK-LABEL: func.func @attention_heads
// CHECK-SAME: tensor<2x8x16xf32> {lamina.split_axes = {{\[\[0\]\]}}}
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @attention_heads(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %heads = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %qs = shard.shard %q to %heads annotate_for_users : tensor<4x8x16xf32>
  %ks = shard.shard %k to %heads annotate_for_users : tensor<4x8x16xf32>
  %vs = shard.shard %v to %heads annotate_for_users : tensor<4x8x16xf32>
  %o = "nn.attention"(%qs, %ks, %vs) : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}

// -----

// Without a grid the pass changes nothing: the nn ops stay.
// CHECK-LABEL: func.func @unsharded
// CHECK: "nn.matmul"
// CHECK-NOT: linalg.matmul
func.func @unsharded(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %h = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}
