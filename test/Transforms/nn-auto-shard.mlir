// RUN: lamina-opt %s --split-input-file --nn-auto-shard='grid=2' | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-auto-shard='grid=2 report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// A small batch and large weights: Megatron's column-then-row split
// communicates one all-reduce of the 4x16 result (2 (n-1)/n * 256 bytes),
// less than gathering the weights for data parallelism
// ((n-1)/n * (2048 + 128 + 2048) bytes). The matmul with partial sums has
// no result annotation; the return reads it whole.

// CHECK: shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @mlp_small_batch
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x16xf32>, %[[W1:[^:]+]]: tensor<16x32xf32>, %[[B1:[^:]+]]: tensor<32xf32>, %[[W2:[^:]+]]: tensor<32x16xf32>)
// CHECK-SAME: lamina.communicated_bytes = 256 : i64, lamina.sharding_strategy = "tensor-parallel"
// CHECK-DAG: %[[WHOLE:.+]] = shard.sharding @grid split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-DAG: %[[COLUMNS:.+]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
// CHECK-DAG: %[[ROWS:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-DAG: %[[XS:.+]] = shard.shard %[[X]] to %[[WHOLE]] : tensor<4x16xf32>
// CHECK-DAG: %[[W1S:.+]] = shard.shard %[[W1]] to %[[COLUMNS]] : tensor<16x32xf32>
// CHECK-DAG: %[[B1S:.+]] = shard.shard %[[B1]] to %[[ROWS]] : tensor<32xf32>
// CHECK-DAG: %[[W2S:.+]] = shard.shard %[[W2]] to %[[ROWS]] : tensor<32x16xf32>
// CHECK: %[[H:.+]] = "nn.matmul"(%[[XS]], %[[W1S]])
// CHECK: %[[HS:.+]] = shard.shard %[[H]] to %[[COLUMNS]] : tensor<4x32xf32>
// CHECK: "nn.add"(%[[HS]], %[[B1S]])
// CHECK: %[[Y:.+]] = "nn.matmul"(%{{.+}}, %[[W2S]])
// CHECK-NOT: shard.shard %[[Y]] to %{{.+}} : tensor
// CHECK: %[[YS:.+]] = shard.shard %[[Y]] to %[[WHOLE]] annotate_for_users : tensor<4x16xf32>
// CHECK: return %[[YS]]
// REPORT: nn-auto-shard.mlir:[[@LINE+5]]:1: remark: nn-auto-shard: @mlp_small_batch on a grid of 2: tensor-parallel, 256 bytes per step
// REPORT-NEXT: remark: candidate replicated: 2112 bytes per step (all_gather %arg1 1024, all_gather %arg2 64, all_gather %arg3 1024)
// REPORT-NEXT: remark: candidate data-parallel: 2112 bytes per step
// REPORT-NEXT: remark: candidate sequence-parallel: not applicable: %arg0 has rank 2: no sequence axis besides the batch
// REPORT-NEXT: remark: candidate tensor-parallel: 256 bytes per step (all_reduce %3 256)
func.func @mlp_small_batch(%x: tensor<4x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %r = "nn.gelu"(%hb) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The same MLP with a large batch: all-reducing the 64x16 result (4096
// bytes) costs more than gathering the weights (2112 bytes), so the batch
// is split. Weights are stored split on their first dim and gathered.

// CHECK-LABEL: func.func @mlp_large_batch
// CHECK-SAME: (%[[X:[^:]+]]: tensor<64x16xf32>, %[[W1:[^:]+]]: tensor<16x32xf32>
// CHECK-SAME: lamina.communicated_bytes = 2112 : i64, lamina.sharding_strategy = "data-parallel"
// CHECK-DAG: %[[ROWS:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-DAG: %[[WHOLE:.+]] = shard.sharding @grid split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-DAG: %[[XS:.+]] = shard.shard %[[X]] to %[[ROWS]] : tensor<64x16xf32>
// CHECK-DAG: %[[W1S:.+]] = shard.shard %[[W1]] to %[[ROWS]] : tensor<16x32xf32>
// CHECK-DAG: %[[W1G:.+]] = shard.shard %[[W1S]] to %[[WHOLE]] annotate_for_users : tensor<16x32xf32>
// CHECK: "nn.matmul"(%[[XS]], %[[W1G]])
// CHECK-NOT: annotate_for_users : tensor<64x
// CHECK: return
// REPORT: nn-auto-shard.mlir:[[@LINE+3]]:1: remark: nn-auto-shard: @mlp_large_batch on a grid of 2: data-parallel, 2112 bytes per step
// REPORT: remark: candidate data-parallel: 2112 bytes per step (all_gather %arg1 1024, all_gather %arg2 64, all_gather %arg3 1024)
// REPORT: remark: candidate tensor-parallel: 4096 bytes per step (all_reduce %3 4096)
func.func @mlp_large_batch(%x: tensor<64x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<64x16xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %r = "nn.gelu"(%hb) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// Attention over a batch: splitting the batch communicates nothing;
// splitting the sequence gathers the keys and values (the softmax runs
// over all keys).

// CHECK-LABEL: func.func @attention
// CHECK-SAME: lamina.communicated_bytes = 0 : i64, lamina.sharding_strategy = "data-parallel"
// CHECK: %[[ROWS:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK: %[[O:.+]] = "nn.attention"
// CHECK: shard.shard %[[O]] to %[[ROWS]] : tensor<4x8x16xf32>
// CHECK-NOT: annotate_for_users
// CHECK: return
// REPORT: remark: nn-auto-shard: @attention on a grid of 2: data-parallel, 0 bytes per step
// REPORT: remark: candidate data-parallel: 0 bytes per step (no collectives); 4096 bytes per device
// REPORT: remark: candidate sequence-parallel: 2048 bytes per step (all_gather %arg1 1024, all_gather %arg2 1024)
// REPORT: remark: candidate tensor-parallel: not applicable: no matmul reads a parameter
func.func @attention(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}

// -----

// A multi-head attention block (layer_norm, per-head projections with the
// heads as the weights' batch dim, attention over the heads, the output
// projection and the sum over heads, a residual) with one sequence of 8
// tokens. Megatron by heads: each device computes one head, the weights
// stored by heads are read where they are, and the sum over heads is one
// all-reduce of the 8x16 result (512 bytes), besides gathering the
// layer_norm's scale and shift (32 bytes each). Splitting the tokens
// instead gathers every weight and the keys and values (2624 bytes).

// CHECK-LABEL: func.func @attention_block
// CHECK-SAME: lamina.communicated_bytes = 576 : i64, lamina.sharding_strategy = "tensor-parallel"
// CHECK-DAG: %[[HEADS:.+]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-DAG: %[[WHOLE:.+]] = shard.sharding @grid split_axes = {{\[\[}}]] : !shard.sharding
// CHECK: %[[Q:.+]] = "nn.matmul"
// CHECK: %[[QS:.+]] = shard.shard %[[Q]] to %[[HEADS]] : tensor<2x8x8xf32>
// CHECK: %[[A:.+]] = "nn.attention"(%[[QS]],
// CHECK: shard.shard %[[A]] to %[[HEADS]] : tensor<2x8x8xf32>
// CHECK: %[[S:.+]] = "nn.reduce_sum"
// CHECK-NOT: shard.shard %[[S]] to %{{.+}} : tensor
// CHECK: %[[SW:.+]] = shard.shard %[[S]] to %[[WHOLE]] annotate_for_users : tensor<8x16xf32>
// CHECK: "nn.add"(%{{.+}}, %[[SW]])
// REPORT: remark: nn-auto-shard: @attention_block on a grid of 2: tensor-parallel, 576 bytes per step
// REPORT: remark: candidate data-parallel: 2624 bytes per step
// REPORT: remark: candidate tensor-parallel: 576 bytes per step (all_gather %arg1 32, all_gather %arg2 32, all_reduce %6 512)
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

// -----

// No dim divisible by the grid: every strategy but `replicated` is not
// applicable, and the program stays whole on every device (a remark says
// why); nothing is communicated.

// CHECK-LABEL: func.func @indivisible
// CHECK-SAME: lamina.communicated_bytes = 0 : i64, lamina.sharding_strategy = "replicated"
// CHECK-NOT: split_axes = {{\[\[}}0
// CHECK-NOT: split_axes = {{\[\[}}], [0
// CHECK: return
// REPORT: nn-auto-shard.mlir:[[@LINE+5]]:1: remark: nn-auto-shard: @indivisible on a grid of 2: replicated, 0 bytes per step (no other strategy applies)
// REPORT-NEXT: remark: candidate replicated: 0 bytes per step (no collectives)
// REPORT-NEXT: remark: candidate data-parallel: not applicable: the batch axis of %arg0 (3) is not divisible by the grid (2)
// REPORT-NEXT: remark: candidate sequence-parallel: not applicable: %arg0 has rank 2
// REPORT-NEXT: remark: candidate tensor-parallel: not applicable: the grid (2) divides no dim the strategy would split
func.func @indivisible(%x: tensor<3x5xf32>, %w1: tensor<5x7xf32>, %w2: tensor<7x3xf32>) -> tensor<3x3xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<3x5xf32>, tensor<5x7xf32>) -> tensor<3x7xf32>
  %r = "nn.relu"(%h) : (tensor<3x7xf32>) -> tensor<3x7xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<3x7xf32>, tensor<7x3xf32>) -> tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}
