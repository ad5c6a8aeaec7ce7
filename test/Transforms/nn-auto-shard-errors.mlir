// RUN: lamina-opt %s --split-input-file --verify-diagnostics --nn-auto-shard='grid=2 strategy=tensor-parallel'

// A program that already has shardings is not annotated again.

// expected-error @+1 {{nn-auto-shard expects a program without shardings; this one already has 'shard.grid'}}
shard.grid @mesh(shape = 2)
func.func @sharded(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %y = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A strategy that was asked for but does not apply is an error at the
// function: attention alone reads no parameter through a matmul.

// expected-error @+1 {{strategy 'tensor-parallel' does not apply to @attention: no matmul reads a parameter}}
func.func @attention(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}
