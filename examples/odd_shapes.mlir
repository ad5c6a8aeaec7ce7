// Shapes that no tile divides and dims of 1, in f16 and f32: a GEMV (one
// row times a 129x7 weight), an outer product (K = 1), a softmax over an
// axis of one element, a layer norm over 129, a maximum over a leading
// axis, a transpose of a 33x17 matrix, a strided slice, a pad, a concat,
// a broadcast and an argmax.
//
//   lamina-run examples/odd_shapes.mlir --random --check
//   lamina-run examples/odd_shapes.mlir --target=cuda:sm_80 --emulate --random --check

func.func @main(%x: tensor<1x129xf16>, %w: tensor<129x7xf16>, %b: tensor<7xf16>,
                %u: tensor<33x1xf32>, %v: tensor<1x17xf32>,
                %g: tensor<129xf32>, %beta: tensor<129xf32>, %t: tensor<33x1x17xf32>)
    -> (tensor<1x7xf32>, tensor<33x1xf32>, tensor<1x129xf32>, tensor<1x17xf32>,
        tensor<17x33xf32>, tensor<35x9xf32>, tensor<3x129xf32>, tensor<33xi64>) {
  // GEMV with a bias and tanh, then cast to f32.
  %xw = "nn.matmul"(%x, %w) : (tensor<1x129xf16>, tensor<129x7xf16>) -> tensor<1x7xf16>
  %xb = "nn.add"(%xw, %b) : (tensor<1x7xf16>, tensor<7xf16>) -> tensor<1x7xf16>
  %xt = "nn.tanh"(%xb) : (tensor<1x7xf16>) -> tensor<1x7xf16>
  %y0 = "nn.cast"(%xt) : (tensor<1x7xf16>) -> tensor<1x7xf32>
  // An outer product (K = 1) and a softmax over its last axis, of 17.
  %outer = "nn.matmul"(%u, %v) : (tensor<33x1xf32>, tensor<1x17xf32>) -> tensor<33x17xf32>
  // A softmax over an axis of one element is all ones.
  %y1 = "nn.softmax"(%u) {axis = -1 : i64} : (tensor<33x1xf32>) -> tensor<33x1xf32>
  // A layer norm over 129 features of the f16 row, in f32.
  %xf = "nn.cast"(%x) : (tensor<1x129xf16>) -> tensor<1x129xf32>
  %y2 = "nn.layer_norm"(%xf, %g, %beta) {axis = -1 : i64}
      : (tensor<1x129xf32>, tensor<129xf32>, tensor<129xf32>) -> tensor<1x129xf32>
  // The maximum over a leading axis (walked in place, strided).
  %y3 = "nn.reduce_max"(%t) {axes = array<i64: 0>} : (tensor<33x1x17xf32>) -> tensor<1x17xf32>
  // Data movement on odd sizes.
  %y4 = "nn.transpose"(%outer) {perm = array<i64: 1, 0>} : (tensor<33x17xf32>) -> tensor<17x33xf32>
  %s = "nn.slice"(%outer) {starts = array<i64: 0, 0>, limits = array<i64: 33, 17>, strides = array<i64: 1, 2>}
      : (tensor<33x17xf32>) -> tensor<33x9xf32>
  %y5 = "nn.pad"(%s) {low = array<i64: 1, 0>, high = array<i64: 1, 0>} : (tensor<33x9xf32>) -> tensor<35x9xf32>
  %gb = "nn.reshape"(%g) : (tensor<129xf32>) -> tensor<1x129xf32>
  %two = "nn.broadcast_to"(%gb) : (tensor<1x129xf32>) -> tensor<2x129xf32>
  %y6 = "nn.concat"(%y2, %two) {axis = 0 : i64} : (tensor<1x129xf32>, tensor<2x129xf32>) -> tensor<3x129xf32>
  %y7 = "nn.argmax"(%outer) {axis = 1 : i64} : (tensor<33x17xf32>) -> tensor<33xi64>
  return %y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7
      : tensor<1x7xf32>, tensor<33x1xf32>, tensor<1x129xf32>, tensor<1x17xf32>,
        tensor<17x33xf32>, tensor<35x9xf32>, tensor<3x129xf32>, tensor<33xi64>
}
