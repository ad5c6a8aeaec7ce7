// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// softmax, log_softmax, layer_norm, rms_norm.

func.func @softmax_axis_out_of_range(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.softmax' op axis 2 is out of range for rank 2}}
  %0 = "nn.softmax"(%x) {axis = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @log_softmax_negative_axis_out_of_range(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.log_softmax' op axis -3 is out of range for rank 2}}
  %0 = "nn.log_softmax"(%x) {axis = -3 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @softmax_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{'nn.softmax' op axis -1 is out of range for rank 0}}
  %0 = "nn.softmax"(%x) : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @softmax_result_mismatch(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.softmax' op result type tensor<2xf32> does not match the inferred type tensor<2x4xf32>}}
  %0 = "nn.softmax"(%x) : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op gamma must have shape [8] (the normalised dims), got tensor<4xf32>}}
  %0 = "nn.layer_norm"(%x, %g, %b) : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_beta_shape(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op beta must have shape [8] (the normalised dims), got tensor<1x8xf32>}}
  %0 = "nn.layer_norm"(%x, %g, %b) : (tensor<2x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_gamma_shape_with_axis(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op gamma must have shape [3x8] (the normalised dims), got tensor<8xf32>}}
  %0 = "nn.layer_norm"(%x, %g, %g) {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op axis 5 is out of range for rank 2}}
  %0 = "nn.layer_norm"(%x, %g, %g) {axis = 5 : i64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op 'epsilon' must be >= 0, got -1.0}}
  %0 = "nn.layer_norm"(%x, %g, %g) {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_element_types_differ(%x: tensor<2x8xf32>, %g: tensor<8xf16>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op element types differ: f32 vs f16 vs f32}}
  %0 = "nn.layer_norm"(%x, %g, %b) : (tensor<2x8xf32>, tensor<8xf16>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_missing_beta(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{op expects 3 operands, got 2}}
  %0 = "nn.layer_norm"(%x, %g) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_gamma_shape(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.rms_norm' op gamma must have shape [8] (the normalised dims), got tensor<2x8xf32>}}
  %0 = "nn.rms_norm"(%x, %g) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_negative_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.rms_norm' op 'epsilon' must be >= 0, got -0.5}}
  %0 = "nn.rms_norm"(%x, %g) {epsilon = -0.5 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_element_types_differ(%x: tensor<2x8xbf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'nn.rms_norm' op element types differ: bf16 vs f32}}
  %0 = "nn.rms_norm"(%x, %g) : (tensor<2x8xbf16>, tensor<8xf32>) -> tensor<2x8xbf16>
  return
}
