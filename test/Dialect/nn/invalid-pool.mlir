// RUN: lamina-opt %s --split-input-file --verify-diagnostics

func.func @kernel_missing(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op requires attribute 'kernel'}}
  %0 = "nn.max_pool2d"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @kernel_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op 'kernel' must have 2 elements, got 1}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @kernel_zero(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.avg_pool2d' op 'kernel' values must be >= 1, got [0, 2]}}
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x7xf32>
  return
}

// -----

func.func @kernel_of_wrong_kind(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.avg_pool2d' op attribute 'kernel' must be an array<i64: ...>, got 2 : i64}}
  %0 = "nn.avg_pool2d"(%x) {kernel = 2 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @strides_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op 'strides' must have 2 elements, got 4}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2, 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @strides_negative(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op 'strides' values must be >= 1, got [-1, 1]}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: -1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @padding_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.avg_pool2d' op 'padding' must have 4 elements, got 2}}
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x9xf32>
  return
}

// -----

func.func @padding_negative(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.avg_pool2d' op 'padding' values must be >= 0, got [0, 0, -1, 0]}}
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, -1, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x7xf32>
  return
}

// -----

func.func @input_not_nchw(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op pooling input must be NCHW (rank 4), got tensor<3x8x8xf32>}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<3x8x8xf32>) -> tensor<3x7x7xf32>
  return
}

// -----

func.func @window_too_large(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op pooling window 3x3 does not fit the padded input 2x2}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 3, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @result_mismatch(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.avg_pool2d' op result type tensor<1x3x8x8xf32> does not match the inferred type tensor<1x3x4x4xf32>}}
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @channels_last_result_mismatch(%x: tensor<1x8x8x3xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op result type tensor<1x3x4x4xf32> does not match the inferred type tensor<1x4x4x3xf32>}}
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : (tensor<1x8x8x3xf32>) -> tensor<1x3x4x4xf32>
  return
}
