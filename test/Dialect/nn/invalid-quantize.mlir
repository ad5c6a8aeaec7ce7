// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// nn.quantize and nn.dequantize: element types of the value, the scale and
// the zero point, and the shapes of per-tensor and per-channel parameters.

func.func @quantize_integer_input(%x: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{'nn.quantize' op operand #0 has element type i32; expected f32}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<4xi32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  return
}

// -----

func.func @quantize_f16_scale(%x: tensor<4xf32>, %s: tensor<f16>, %z: tensor<i8>) {
  // expected-error @+1 {{'nn.quantize' op operand #1 has element type f16; expected f32}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<4xf32>, tensor<f16>, tensor<i8>) -> tensor<4xi8>
  return
}

// -----

func.func @quantize_to_i32(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  // expected-error @+1 {{'nn.quantize' op operand #2 has element type i32; expected i8 or ui8}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xi32>
  return
}

// -----

func.func @quantize_result_type_differs(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error @+1 {{'nn.quantize' op result type tensor<4xi8> does not match the inferred type tensor<4xui8>}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xi8>
  return
}

// -----

func.func @parameter_shapes_differ(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %z: tensor<i8>) {
  // expected-error @+1 {{'nn.quantize' op scale and zero point shapes differ: tensor<4xf32> vs tensor<i8>}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<2x4xf32>, tensor<4xf32>, tensor<i8>) -> tensor<2x4xi8>
  return
}

// -----

func.func @parameters_rank_2(%x: tensor<2x4xf32>, %s: tensor<2x4xf32>, %z: tensor<2x4xi8>) {
  // expected-error @+1 {{'nn.quantize' op scale must be rank 0 (per tensor) or 1 (per channel), got tensor<2x4xf32>}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xi8>) -> tensor<2x4xi8>
  return
}

// -----

func.func @per_channel_length(%x: tensor<2x4xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  // expected-error @+1 {{'nn.quantize' op per-channel scale has 2 elements but axis 1 of tensor<2x4xf32> has 4}}
  %0 = "nn.quantize"(%x, %s, %z) : (tensor<2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4xi8>
  return
}

// -----

func.func @per_channel_axis_out_of_range(%x: tensor<2x4xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  // expected-error @+1 {{'nn.quantize' op axis 2 is out of range for rank 2}}
  %0 = "nn.quantize"(%x, %s, %z) {axis = 2 : i64} : (tensor<2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4xi8>
  return
}

// -----

func.func @dequantize_float_input(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{'nn.dequantize' op operand #0 has element type f32; expected i8 or ui8}}
  %0 = "nn.dequantize"(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return
}

// -----

func.func @dequantize_zero_point_type(%x: tensor<4xui8>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{'nn.dequantize' op zero point type i8 differs from the quantised type ui8}}
  %0 = "nn.dequantize"(%x, %s, %z) : (tensor<4xui8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return
}

// -----

func.func @dequantize_per_channel_axis_0(%x: tensor<2x4xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) {
  // expected-error @+1 {{'nn.dequantize' op per-channel scale has 4 elements but axis 0 of tensor<2x4xi8> has 2}}
  %0 = "nn.dequantize"(%x, %s, %z) {axis = 0 : i64} : (tensor<2x4xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<2x4xf32>
  return
}
