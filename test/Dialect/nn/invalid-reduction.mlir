// RUN: lamina-opt %s --split-input-file --verify-diagnostics

func.func @axes_missing(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op requires attribute 'axes'}}
  %0 = "nn.reduce_sum"(%x) : (tensor<2x4xf32>) -> tensor<f32>
  return
}

// -----

func.func @axes_empty(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_max' op reduction needs at least one axis}}
  %0 = "nn.reduce_max"(%x) {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @axis_out_of_range(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_min' op reduction axis 2 is out of range for rank 2}}
  %0 = "nn.reduce_min"(%x) {axes = array<i64: 2>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @negative_axis_out_of_range(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_mean' op reduction axis -3 is out of range for rank 2}}
  %0 = "nn.reduce_mean"(%x) {axes = array<i64: -3>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @axes_repeat(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op reduction axes repeat: [1, -1]}}
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1, -1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @rank0_input(%x: tensor<f32>) {
  // expected-error @+1 {{'nn.reduce_sum' op reduction axis 0 is out of range for rank 0}}
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @keepdims_ignored_in_result(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op result type tensor<2xf32> does not match the inferred type tensor<2x1xf32>}}
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduced_dim_kept(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_max' op result type tensor<1x4xf32> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @integer_mean(%x: tensor<2x4xi32>) {
  // expected-error @+1 {{'nn.reduce_mean' op operand #0 has element type i32; expected f32 or f16 or bf16}}
  %0 = "nn.reduce_mean"(%x) {axes = array<i64: 0>} : (tensor<2x4xi32>) -> tensor<4xi32>
  return
}
