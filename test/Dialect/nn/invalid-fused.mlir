// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// nn.fused calls a function of its module: its inputs and results must be
// that function's arguments and results, and its kind one of the group kinds.

func.func @no_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.fused' op calls @fusion_0, which the module does not define}}
  %0 = "nn.fused"(%x) {body = @fusion_0, kind = "elementwise"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_inputs(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.fused' op inputs (tensor<4xf32>) do not match the arguments of @fusion_0 (tensor<8xf32>)}}
  %0 = "nn.fused"(%x) {body = @fusion_0, kind = "elementwise"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @fusion_0(%x: tensor<8xf32>) -> tensor<4xf32> {
  %0 = "nn.slice"(%x) {starts = array<i64: 0>, limits = array<i64: 4>} : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_results(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'nn.fused' op results (tensor<4xf16>) do not match the results of @fusion_0 (tensor<4xf32>)}}
  %0 = "nn.fused"(%x) {body = @fusion_0, kind = "elementwise"} : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
func.func private @fusion_0(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.fused' op attribute 'kind': "loop" is not one of "elementwise", "reduction", "contraction", "convolution"}}
  %0 = "nn.fused"(%x) {body = @fusion_0, kind = "loop"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @fusion_0(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @missing_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.fused' op requires attribute 'body'}}
  %0 = "nn.fused"(%x) {kind = "elementwise"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
