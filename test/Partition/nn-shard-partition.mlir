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

// -----

// Explicit reshardings take one collective each: rows -> columns is an
// all-to-all, columns -> replicated an all-gather, and a partial product
// wanted by rows a reduce-scatter (not an all-reduce and a slice).
// CHECK-LABEL: func.func @reshardings
// CHECK: shard.all_to_all %{{.+}} on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK: shard.all_gather %{{.+}} on @g grid_axes = [0] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x8xf32>
// CHECK: shard.reduce_scatter %{{.+}} on @g grid_axes = [0] scatter_axis = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NOT: shard.all_reduce
// CHECK-NOT: shard.all_slice
// CHECK: return
shard.grid @g(shape = 2)
func.func @reshardings(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %whole = shard.sharding @g split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x8xf32>
  %e = "nn.exp"(%xs) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e_rows = shard.shard %e to %rows : tensor<8x8xf32>
  %e_cols = shard.shard %e_rows to %cols annotate_for_users : tensor<8x8xf32>
  %t = "nn.tanh"(%e_cols) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %t_cols = shard.shard %t to %cols : tensor<8x8xf32>
  %t_whole = shard.shard %t_cols to %whole annotate_for_users : tensor<8x8xf32>
  %r = "nn.relu"(%t_whole) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %t_k = shard.shard %t_cols to %cols annotate_for_users : tensor<8x8xf32>
  %ws = shard.shard %w to %rows annotate_for_users : tensor<8x8xf32>
  %m = "nn.matmul"(%t_k, %ws) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %m_rows = shard.shard %m to %rows annotate_for_users : tensor<8x8xf32>
  %s = "nn.sigmoid"(%m_rows) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %s : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A replicated value wanted split is sliced locally: no communication.
// CHECK-LABEL: func.func @slice_locally
// CHECK: shard.all_slice %{{.+}} on @g grid_axes = [0] slice_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NOT: shard.all_reduce
// CHECK-NOT: shard.all_gather
// CHECK: return
shard.grid @g(shape = 2)
func.func @slice_locally(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = shard.sharding @g split_axes = [[]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %r annotate_for_users : tensor<4x8xf32>
  %e = "nn.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e0 = shard.shard %e to %r : tensor<4x8xf32>
  %e1 = shard.shard %e0 to %s1 annotate_for_users : tensor<4x8xf32>
  %t = "nn.tanh"(%e1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Ops upstream has no rule for follow Lamina's: a padded convolution and a
// reshape on a split batch run on the local batch, with no communication.
// CHECK-LABEL: func.func @conv_batch
// CHECK-SAME: tensor<2x3x8x8xf32> {lamina.split_axes = {{\[\[0\]\]}}}
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {{.+}} ins(%{{.+}}, %{{.+}} : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%{{.+}} : tensor<2x4x8x8xf32>)
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2, 3]] : tensor<2x4x8x8xf32> into tensor<2x256xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @conv_batch(%x: tensor<4x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<4x256xf32> {
  %batch = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %batch annotate_for_users : tensor<4x3x8x8xf32>
  %c = "nn.conv2d"(%xs, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x4x8x8xf32>
  %f = "nn.reshape"(%c) : (tensor<4x4x8x8xf32>) -> tensor<4x256xf32>
  return %f : tensor<4x256xf32>
}

// -----

// A convolution with its filters split computes its own output channels.
// CHECK-LABEL: func.func @conv_output_channels
// CHECK-SAME: tensor<2x3x3x3xf32> {lamina.split_axes = {{\[\[0\]\]}}}
// CHECK-SAME: -> (tensor<2x2x6x6xf32> {lamina.split_axes = {{\[\[\], \[0\], \[\], \[\]\]}}})
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @conv_output_channels(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %out = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %out annotate_for_users : tensor<4x3x3x3xf32>
  %y = "nn.conv2d"(%x, %ws) {strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

// A reshape that mixes a split axis with others needs its operand whole:
// one all-gather before it, and nothing else.
// CHECK-LABEL: func.func @reshape_gathers
// CHECK: shard.all_gather %{{.+}} on @g grid_axes = [0] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @reshape_gathers(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %cols annotate_for_users : tensor<4x8xf32>
  %e = "nn.exp"(%xs) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = "nn.reshape"(%e) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %t = "nn.tanh"(%r) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

// Concat and slice keep the rows split when they work along the columns.
// CHECK-LABEL: func.func @concat_slice_rows
// CHECK: tensor.concat dim(1) %{{.+}}, %{{.+}} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 2] [2, 12] [1, 1] : tensor<2x16xf32> to tensor<2x12xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @concat_slice_rows(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x12xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<4x8xf32>
  %ys = shard.shard %y to %rows annotate_for_users : tensor<4x8xf32>
  %c = "nn.concat"(%xs, %ys) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %s = "nn.slice"(%c) {starts = array<i64: 0, 2>, limits = array<i64: 4, 14>} : (tensor<4x16xf32>) -> tensor<4x12xf32>
  return %s : tensor<4x12xf32>
}

// -----

// A sharding written on a contraction's result (its contracted axis split)
// says how its users want it: one reduce-scatter after the partial product.
// CHECK-LABEL: func.func @partial_product_by_rows
// CHECK: shard.reduce_scatter %{{.+}} on @g grid_axes = [0] scatter_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @partial_product_by_rows(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %k1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %k0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %k1 annotate_for_users : tensor<4x8xf32>
  %b = shard.shard %w to %k0 annotate_for_users : tensor<8x8xf32>
  %m = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %m0 = shard.shard %m to %k0 : tensor<4x8xf32>
  %t = "nn.tanh"(%m0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Causal attention with its queries split along the sequence: the mask
// compares global positions, so the query index gets the rank's offset.
// CHECK-LABEL: func.func @causal_queries
// CHECK: %[[RANK:.+]] = shard.process_multi_index on @g axes = [0] : index
// CHECK: %[[OFFSET:.+]] = arith.muli %[[RANK]], %{{.+}} : index
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: arith.addi %[[I]], %[[OFFSET]] : index
// CHECK-NOT: shard.all_
// CHECK: return
shard.grid @g(shape = 2)
func.func @causal_queries(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %seq = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %seq annotate_for_users : tensor<2x8x4xf32>
  %o = "nn.attention"(%qs, %k, %v) {causal = true} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}
