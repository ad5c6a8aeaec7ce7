// RUN: lamina-opt %s --split-input-file --verify-diagnostics

func.func @strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'strides' must have 2 elements, got 3}}
  %0 = "nn.conv2d"(%x, %w) {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @strides_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'strides' values must be >= 1, got [1, 0]}}
  %0 = "nn.conv2d"(%x, %w) {strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @padding_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'padding' must have 4 elements, got 2}}
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'padding' values must be >= 0, got [0, -1, 0, 0]}}
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  return
}

// -----

func.func @dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'dilations' must have 2 elements, got 1}}
  %0 = "nn.conv2d"(%x, %w) {dilations = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @dilations_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'dilations' values must be >= 1, got [0, 1]}}
  %0 = "nn.conv2d"(%x, %w) {dilations = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @groups_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op 'groups' must be >= 1, got 0}}
  %0 = "nn.conv2d"(%x, %w) {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @groups_of_wrong_kind(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op attribute 'groups' must be a 64-bit integer, got array<i64: 1>}}
  %0 = "nn.conv2d"(%x, %w) {groups = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @input_not_nchw(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d input must be NCHW (rank 4), got tensor<3x8x8xf32>}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @weight_not_oihw(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d weight must be OIHW (rank 4), got tensor<4x3x3xf32>}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @channels_not_divisible_by_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d channels (3 in, 4 out) are not divisible by groups = 2}}
  %0 = "nn.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @input_channels_differ(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d input channels differ: input has 3, weight expects 2 x 1 groups}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @grouped_input_channels_differ(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d input channels differ: input has 4, weight expects 4 x 2 groups}}
  %0 = "nn.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d bias must have shape [4], got tensor<3xf32>}}
  %0 = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @bias_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'nn.conv2d' op element types differ: f32 vs f32 vs f16}}
  %0 = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x5x5xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d kernel 5x5 does not fit the padded input 4x4}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x4x4xf32>, tensor<4x3x5x5xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @dilated_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d kernel 3x3 does not fit the padded input 4x4}}
  %0 = "nn.conv2d"(%x, %w) {dilations = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @result_ignores_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op result type tensor<1x4x6x6xf32> does not match the inferred type tensor<1x4x3x3xf32>}}
  %0 = "nn.conv2d"(%x, %w) {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @unknown_layout(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op attribute 'layout': "NCWH" is not one of "NCHW", "NHWC"}}
  %0 = "nn.conv2d"(%x, %w) {layout = "NCWH"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @channels_last_channels(%x: tensor<1x8x8x3xf32>, %w: tensor<4x8x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d input channels differ: input has 3, weight expects 8 x 1 groups}}
  %0 = "nn.conv2d"(%x, %w) {layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<4x8x3x3xf32>) -> tensor<1x6x6x4xf32>
  return
}

// -----

func.func @channels_last_rank(%x: tensor<8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op conv2d input must be NHWC (rank 4), got tensor<8x8x3xf32>}}
  %0 = "nn.conv2d"(%x, %w) {layout = "NHWC"} : (tensor<8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<6x6x4xf32>
  return
}

// -----

func.func @integer_bias(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi8>) {
  // expected-error @+1 {{'nn.conv2d' op an integer conv2d takes no bias (add it to the i32 result), got tensor<4xi8>}}
  %0 = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>, tensor<4xi8>) -> tensor<1x4x6x6xi32>
  return
}

// -----

func.func @signed_input_unsigned_weight(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xui8>) {
  // expected-error @+1 {{'nn.conv2d' op integer operands must be i8 x i8, ui8 x i8; these are i8 x ui8}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xi32>
  return
}
