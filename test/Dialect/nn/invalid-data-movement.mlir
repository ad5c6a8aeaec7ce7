// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// transpose, reshape, broadcast_to, concat, slice, pad.

func.func @perm_not_a_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op 'perm' [0, 0] is not a permutation of the 2 dims of tensor<2x3xf32>}}
  %0 = "nn.transpose"(%x) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @perm_wrong_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op 'perm' [2, 0, 1] is not a permutation of the 2 dims of tensor<2x3xf32>}}
  %0 = "nn.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_result_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op result type tensor<2x3xf32> does not match the inferred type tensor<3x2xf32>}}
  %0 = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_changes_element_type(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.reshape' op reshape changes the element type: f32 to f16}}
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<12xf16>
  return
}

// -----

func.func @reshape_changes_element_count(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.reshape' op reshape changes the element count: tensor<2x6xf32> has 12, tensor<5x2xf32> has 10}}
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<5x2xf32>
  return
}

// -----

func.func @reshape_to_dynamic(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.reshape' op result type tensor<?x6xf32> does not match the inferred type tensor<2x6xf32>}}
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @broadcast_to_changes_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.broadcast_to' op broadcast_to changes the element type: f32 to bf16}}
  %0 = "nn.broadcast_to"(%x) : (tensor<4xf32>) -> tensor<2x4xbf16>
  return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast_to' op cannot broadcast tensor<3xf32> to tensor<2x4xf32>}}
  %0 = "nn.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

// broadcast_to never shrinks: 2x4 does not broadcast to 1x4.
func.func @broadcast_to_smaller(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.broadcast_to' op cannot broadcast tensor<2x4xf32> to tensor<1x4xf32>}}
  %0 = "nn.broadcast_to"(%x) : (tensor<2x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @concat_axis_missing(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.concat' op requires attribute 'axis'}}
  %0 = "nn.concat"(%x, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_axis_out_of_range(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.concat' op axis 2 is out of range for rank 2}}
  %0 = "nn.concat"(%x, %x) {axis = 2 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_result_mismatch(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.concat' op result type tensor<2x8xf32> does not match the inferred type tensor<4x4xf32>}}
  %0 = "nn.concat"(%x, %x) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_operand_types_differ(%x: tensor<2x4xf32>, %y: tensor<2x4xf16>) {
  // expected-error @+1 {{'nn.concat' op element types differ: f32 vs f16}}
  %0 = "nn.concat"(%x, %y) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf16>) -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_starts_length(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op 'starts' must have 2 elements (the rank), got 1}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0>, limits = array<i64: 2, 8>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @slice_limits_length(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op 'limits' must have 2 elements (the rank), got 3}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 0>, limits = array<i64: 2, 8, 1>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @slice_strides_length(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op 'strides' must have 2 elements (the rank), got 1}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 0>, limits = array<i64: 2, 8>, strides = array<i64: 2>} : (tensor<2x8xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @slice_stride_zero(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op slice stride in dim 1 must be >= 1, got 0}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 0>, limits = array<i64: 2, 8>, strides = array<i64: 1, 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @slice_limit_past_end(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op slice bounds in dim 1 must satisfy 0 <= start <= limit <= 8, got start 2, limit 9}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 2>, limits = array<i64: 2, 9>} : (tensor<2x8xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @slice_start_after_limit(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op slice bounds in dim 0 must satisfy 0 <= start <= limit <= 2, got start 2, limit 1}}
  %0 = "nn.slice"(%x) {starts = array<i64: 2, 0>, limits = array<i64: 1, 8>} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op slice bounds in dim 0 must satisfy 0 <= start <= limit <= 2, got start -1, limit 2}}
  %0 = "nn.slice"(%x) {starts = array<i64: -1, 0>, limits = array<i64: 2, 8>} : (tensor<2x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @slice_result_rounds_up(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.slice' op result type tensor<2x2xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 0>, limits = array<i64: 2, 7>, strides = array<i64: 1, 3>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @pad_low_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.pad' op 'low' must have 2 elements, got 1}}
  %0 = "nn.pad"(%x) {low = array<i64: 1>, high = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @pad_high_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.pad' op 'high' values must be >= 0, got [0, -1]}}
  %0 = "nn.pad"(%x) {low = array<i64: 0, 0>, high = array<i64: 0, -1>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @pad_value_of_wrong_kind(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.pad' op attribute 'value' must be a float, got 0 : i64}}
  %0 = "nn.pad"(%x) {low = array<i64: 0, 0>, high = array<i64: 0, 0>, value = 0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @pad_boolean(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'nn.pad' op operand #0 has element type i1; expected f32 or f16 or bf16}}
  %0 = "nn.pad"(%x) {low = array<i64: 0, 0>, high = array<i64: 0, 0>} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return
}

// -----

func.func @pad_high_missing(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.pad' op requires attribute 'high'}}
  %0 = "nn.pad"(%x) {low = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_ranks_differ(%x: tensor<2x4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.concat' op concat operands have different ranks: 2, 1}}
  %0 = "nn.concat"(%x, %y) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @concat_other_dim_differs(%x: tensor<2x4xf32>, %y: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.concat' op concat operand #1 differs in dim 1: 3 vs 4}}
  %0 = "nn.concat"(%x, %y) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @concat_negative_axis_out_of_range(%x: tensor<2x4xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.concat' op axis -3 is out of range for rank 2}}
  %0 = "nn.concat"(%x, %y) {axis = -3 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return
}

// -----

func.func @pad_value_out_of_range(%x: tensor<2x3xui8>) {
  // expected-error @+1 {{'nn.pad' op pad value 256.0 is not a ui8 value (an integer in [0, 255])}}
  %0 = "nn.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 0>, value = 256.0 : f32} : (tensor<2x3xui8>) -> tensor<2x4xui8>
  return
}
