// Each chunk breaks --verify-diagnostics in its own way (used by ../verify-diagnostics.mlir).
func.func @expected_but_not_produced(%x: tensor<4xf32>) {
  // expected-error @+1 {{this error never happens}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @produced_but_not_expected(%x: tensor<4xf32>) {
  // No expectation here.
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @wrong_message(%x: tensor<4xf32>) {
  // expected-error @+1 {{a different message}}
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @wrong_line(%x: tensor<4xf32>) {
  // expected-error @+2 {{'nn.log' op result type}}
  %0 = "nn.log"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}
