// A matmul of one weight for every batch (x @ W) computes the batches'
// rows as one matrix: every dim of the activations but the last joins the
// rows, unit dims included, and the result splits the rows back the same
// way. Grouping a unit dim with K instead (197x1x768 as 197 x (1x768),
// the torch MultiheadAttention in-projection's shape) made it a unit
// reduction beside K once reshape propagation expanded the matmul, and the
// register tile's contraction, with two reductions, lost its outer-product
// form: 100 ms instead of 3 ms.
// RUN: lamina-opt %s --convert-nn-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @unit_batch_dim
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<197x1x768xf32> into tensor<197x768xf32>
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [197, 1, 2304] : tensor<197x2304xf32> into tensor<197x1x2304xf32>
func.func @unit_batch_dim(%x: tensor<197x1x768xf32>, %w: tensor<768x2304xf32>) -> tensor<197x1x2304xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<197x1x768xf32>, tensor<768x2304xf32>) -> tensor<197x1x2304xf32>
  return %0 : tensor<197x1x2304xf32>
}

// A weight whose batch dims are all 1 is the matrix [K, N] by a rank-reducing
// slice: a collapse could only group its unit dims with K, which reshape
// propagation would make a unit reduction again (1x197x768 @ 1x768x2304:
// 77 ms instead of 3.9).
// CHECK-LABEL: func.func @unit_batch_weight
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x197x768xf32> into tensor<197x768xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 768, 2304] [1, 1, 1] : tensor<1x768x2304xf32> to tensor<768x2304xf32>
// CHECK: linalg.matmul
func.func @unit_batch_weight(%x: tensor<1x197x768xf32>, %w: tensor<1x768x2304xf32>) -> tensor<1x197x2304xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<1x197x768xf32>, tensor<1x768x2304xf32>) -> tensor<1x197x2304xf32>
  return %0 : tensor<1x197x2304xf32>
}
