// The schedule chosen for contractions by the layout of their batch dims,
// through the CPU pipeline's linalg stage: nn.matmul collapses the rows of
// batched activations times an unbatched weight into one 2-D matmul, and
// reshape propagation (linalg-fuse-elementwise-ops) expands them back into
// a generic with several row dims; that generic, a weight per batch, both
// operands batched and unit dims anywhere are all the packed matmul, with
// the 2-D matmul's rows (m), columns (n) and reduction (k) blocked.
// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --convert-nn-to-linalg --canonicalize --linalg-fuse-elementwise-ops --cse --canonicalize --nn-inline-fused | FileCheck %s --check-prefix=LINALG
// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --convert-nn-to-linalg --canonicalize --linalg-fuse-elementwise-ops --cse --canonicalize --nn-inline-fused --cpu-schedule='threads=2 vector-bits=512' | FileCheck %s

// A linear layer on [batch, tokens, features] with a batch of one: d0 is
// the unit batch, d1 the 197 tokens (m, packed in blocks of 8 since 8
// does not divide 197), d2 the 3072 columns in panels of 32 that the two
// threads share.
// LINALG-LABEL: func.func @activations_batch1
// LINALG: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// LINALG-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x197x768xf32>, tensor<768x3072xf32>)
// CHECK-LABEL: func.func @activations_batch1
// CHECK: transform.named_sequence @schedule_activations_batch1_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 8, 32, 0]
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 0, 48, 0, 0, 0]
func.func @activations_batch1(%x: tensor<1x197x768xf32>, %w: tensor<768x3072xf32>) -> tensor<1x197x3072xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<1x197x768xf32>, tensor<768x3072xf32>) -> tensor<1x197x3072xf32>
  return %0 : tensor<1x197x3072xf32>
}

// -----

// A batch of 4 on the activations only: the threads share the batch; B's
// panels are packed once for all of it.
// CHECK-LABEL: func.func @activations_batch4
// CHECK: transform.named_sequence @schedule_activations_batch4_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 8, 32, 0]
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [2, 0, 0, 0, 0, 0]
func.func @activations_batch4(%x: tensor<4x197x768xf32>, %w: tensor<768x3072xf32>) -> tensor<4x197x3072xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x197x768xf32>, tensor<768x3072xf32>) -> tensor<4x197x3072xf32>
  return %0 : tensor<4x197x3072xf32>
}

// -----

// Unit dims inside the batch and as the rows of each batch (x of
// 3x1x24x48 and 5x1x48): m is the dim of more than one iteration (the
// 24 rows; the batch of 5 for single rows, fewer than a register tile's
// 8: a matrix-vector product, B read in place in blocks of 8 of its rows;
// the unit dim is a row dim, not a second reduction beside K).
// CHECK-LABEL: func.func @unit_dims
// CHECK: transform.named_sequence @schedule_unit_dims_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 0, 32, 0]
// CHECK: transform.named_sequence @schedule_unit_dims_{{.+}}_contraction
// CHECK-NOT: transform.structured.pack
// CHECK: transform.structured.tile_using_for %{{.+}} tile_sizes [0, 0, 0, 8]
func.func @unit_dims(%x: tensor<3x1x24x48xf32>, %w: tensor<48x64xf32>, %y: tensor<5x1x48xf32>)
    -> (tensor<3x1x24x64xf32>, tensor<5x1x64xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<3x1x24x48xf32>, tensor<48x64xf32>) -> tensor<3x1x24x64xf32>
  %1 = "nn.matmul"(%y, %w) : (tensor<5x1x48xf32>, tensor<48x64xf32>) -> tensor<5x1x64xf32>
  return %0, %1 : tensor<3x1x24x64xf32>, tensor<5x1x64xf32>
}

// -----

// A weight per batch (the activations broadcast to every batch first)
// and both operands batched.
// CHECK-LABEL: func.func @weights_and_both_batched
// CHECK: transform.named_sequence @schedule_weights_and_both_batched_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 32, 0]
// CHECK: transform.named_sequence @schedule_weights_and_both_batched_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 32, 0]
func.func @weights_and_both_batched(%x: tensor<64x48xf32>, %w: tensor<4x48x96xf32>,
                                    %y: tensor<4x64x48xf32>) -> (tensor<4x64x96xf32>, tensor<4x64x96xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<64x48xf32>, tensor<4x48x96xf32>) -> tensor<4x64x96xf32>
  %1 = "nn.matmul"(%y, %w) : (tensor<4x64x48xf32>, tensor<4x48x96xf32>) -> tensor<4x64x96xf32>
  return %0, %1 : tensor<4x64x96xf32>, tensor<4x64x96xf32>
}

// -----

// A weight with a batch of one is the matrix [k, n] through a rank-reducing
// slice, so that the propagation leaves no unit reduction dim beside k
// (the register tile's contraction would have two reductions and no
// outer-product form).
// LINALG-LABEL: func.func @weight_unit_batch
// LINALG: tensor.extract_slice %{{.+}} : tensor<1x48x96xf32> to tensor<48x96xf32>
// LINALG: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-LABEL: func.func @weight_unit_batch
// CHECK: transform.named_sequence @schedule_weight_unit_batch_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 32, 0]
func.func @weight_unit_batch(%x: tensor<1x64x48xf32>, %w: tensor<1x48x96xf32>) -> tensor<1x64x96xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<1x64x48xf32>, tensor<1x48x96xf32>) -> tensor<1x64x96xf32>
  return %0 : tensor<1x64x96xf32>
}

// -----

// A transformer's MLP layer (bias and gelu) and a residual add on batched
// activations: the epilogue runs in the packed contraction's blocks.
// CHECK-LABEL: func.func @epilogues
// CHECK: transform.named_sequence @schedule_epilogues_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 32, 0]
// CHECK: transform.structured.fuse_into_containing_op
// CHECK: transform.named_sequence @schedule_epilogues_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [0, 0, 32, 0]
// CHECK: transform.structured.fuse_into_containing_op
func.func @epilogues(%x: tensor<4x64x48xf32>, %w: tensor<48x256xf32>, %b: tensor<256xf32>,
                     %y: tensor<1x64x48xf32>, %r: tensor<1x64x256xf32>)
    -> (tensor<4x64x256xf32>, tensor<1x64x256xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x64x48xf32>, tensor<48x256xf32>) -> tensor<4x64x256xf32>
  %1 = "nn.add"(%0, %b) : (tensor<4x64x256xf32>, tensor<256xf32>) -> tensor<4x64x256xf32>
  %2 = "nn.gelu"(%1) : (tensor<4x64x256xf32>) -> tensor<4x64x256xf32>
  %3 = "nn.matmul"(%y, %w) : (tensor<1x64x48xf32>, tensor<48x256xf32>) -> tensor<1x64x256xf32>
  %4 = "nn.add"(%3, %r) : (tensor<1x64x256xf32>, tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  return %2, %4 : tensor<4x64x256xf32>, tensor<1x64x256xf32>
}

// -----

// A 2-D generic multiply-add (what linalg-fold-unit-extent-dims makes of
// a linear layer with a batch of one) is the packed matmul, as the named
// op is.
// CHECK-LABEL: func.func @generic_matmul
// CHECK: transform.named_sequence @schedule_generic_matmul_{{.+}}_contraction
// CHECK: transform.structured.pack %{{.+}} packed_sizes = [8, 32, 0]
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 48, 0, 0, 0]
func.func @generic_matmul(%a: tensor<197x768xf32>, %b: tensor<768x3072xf32>) -> tensor<197x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<197x3072xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<197x3072xf32>) -> tensor<197x3072xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<197x768xf32>, tensor<768x3072xf32>) outs(%init : tensor<197x3072xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<197x3072xf32>
  return %0 : tensor<197x3072xf32>
}

// -----

// Not a packed matmul: a reduction over two dims of more than one
// iteration (k split in 4x12), and a body that subtracts the product.
// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: _contraction
// CHECK: transform.named_sequence @schedule_not_packed_op0(
// CHECK-NOT: transform.structured.pack
// CHECK: transform.named_sequence @schedule_not_packed_op1(
// CHECK-NOT: transform.structured.pack
// CHECK: transform.named_sequence @__transform_main
func.func @not_packed(%a: tensor<64x4x12xf32>, %b: tensor<4x12x96xf32>,
                            %c: tensor<64x12xf32>, %d: tensor<12x96xf32>)
    -> (tensor<64x96xf32>, tensor<64x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x96xf32>) -> tensor<64x96xf32>
  %0 = linalg.generic {
      indexing_maps = [affine_map<(m, n, k0, k1) -> (m, k0, k1)>,
                       affine_map<(m, n, k0, k1) -> (k0, k1, n)>,
                       affine_map<(m, n, k0, k1) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : tensor<64x4x12xf32>, tensor<4x12x96xf32>) outs(%init : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  %1 = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<64x12xf32>, tensor<12x96xf32>) outs(%init : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.subf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %0, %1 : tensor<64x96xf32>, tensor<64x96xf32>
}
