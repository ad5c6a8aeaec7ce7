// Two bad chunks around a good one (used by ../split-input-file.mlir).
func.func @bad_result(%x: tensor<4xf32>) -> tensor<5xf32> {
  // The result type is wrong.
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @good(%x: tensor<4xf32>) {
  return
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) {
  nn.foo %x : tensor<4xf32>
  return
}
