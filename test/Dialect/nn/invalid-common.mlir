// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Rules every nn op shares: operand and result counts and the presence of
// required attributes (checked by IRDL while parsing), attribute kinds and
// enum values, operand and result types, accepted element types, and the
// result type against the inferred one (Python rules in dialects/opdef.py).

func.func @too_many_operands(%x: tensor<4xf32>) {
  // expected-error @+1 {{op expects 1 operands, got 2}}
  %0 = "nn.relu"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @too_few_operands(%x: tensor<4xf32>) {
  // expected-error @+1 {{op expects 2 operands, got 1}}
  %0 = "nn.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @too_few_operands_with_optional(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'nn.conv2d' op expects 2 to 3 operands, got 1}}
  %0 = "nn.conv2d"(%x) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @too_many_operands_with_optional(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.attention' op expects 3 to 4 operands, got 5}}
  %0 = "nn.attention"(%x, %x, %x, %x, %x) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @no_operand_for_variadic() {
  // expected-error @+1 {{'nn.concat' op expects at least one operand}}
  %0 = "nn.concat"() {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @two_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{op expects 1 result(s), got 2}}
  %0:2 = "nn.relu"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @no_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{op expects 1 result(s), got 0}}
  "nn.neg"(%x) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @missing_required_attribute(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op requires attribute 'predicate'}}
  %0 = "nn.compare"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @missing_required_array_attribute(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.transpose' op requires attribute 'perm'}}
  %0 = "nn.transpose"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @enum_of_wrong_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.gelu' op attribute 'approximate' must be one of "none", "tanh", got 1 : i64}}
  %0 = "nn.gelu"(%x) {approximate = 1} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bad_enum_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.gelu' op attribute 'approximate': "fast" is not one of "none", "tanh"}}
  %0 = "nn.gelu"(%x) {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bad_predicate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op attribute 'predicate': "less" is not one of "eq", "ne", "lt", "le", "gt", "ge"}}
  %0 = "nn.compare"(%x, %x) {predicate = "less"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @int_of_wrong_kind(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.softmax' op attribute 'axis' must be a 64-bit integer, got 1.000000e+00 : f32}}
  %0 = "nn.softmax"(%x) {axis = 1.0 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @int_of_wrong_width(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.softmax' op attribute 'axis' must be a 64-bit integer, got 1 : i32}}
  %0 = "nn.softmax"(%x) {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @int_given_a_bool(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.softmax' op attribute 'axis' must be a 64-bit integer, got true}}
  %0 = "nn.softmax"(%x) {axis = true} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @float_of_wrong_kind(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'nn.rms_norm' op attribute 'epsilon' must be a float, got 1 : i64}}
  %0 = "nn.rms_norm"(%x, %g) {epsilon = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @bool_of_wrong_kind(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op attribute 'keepdims' must be a bool, got "yes"}}
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = "yes"} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @array_of_wrong_element_type(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.reduce_sum' op attribute 'axes' must be an array<i64: ...>, got array<i32: 1>}}
  %0 = "nn.reduce_sum"(%x) {axes = array<i32: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @array_given_an_array_attr(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.transpose' op attribute 'perm' must be an array<i64: ...>, got [1, 0]}}
  %0 = "nn.transpose"(%x) {perm = [1, 0]} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @operand_not_a_tensor(%x: f32) {
  // expected-error @+1 {{'nn.relu' op operand #0: expected a ranked tensor, got f32}}
  %0 = "nn.relu"(%x) : (f32) -> tensor<f32>
  return
}

// -----

func.func @operand_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'nn.relu' op operand #0: expected a ranked tensor, got tensor<*xf32>}}
  %0 = "nn.relu"(%x) : (tensor<*xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @operand_dynamic(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'nn.cumsum' op operand #0: dim 1 of tensor<4x?xf32> is dynamic ('?'); 'nn.cumsum' takes statically shaped tensors only}}
  %0 = "nn.cumsum"(%x) {axis = 1 : i64} : (tensor<4x?xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @operand_memref(%x: memref<4xf32>) {
  // expected-error @+1 {{'nn.exp' op operand #0: expected a ranked tensor, got memref<4xf32>}}
  %0 = "nn.exp"(%x) : (memref<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @operand_unsupported_element_type(%x: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{'nn.relu' op operand #0: unsupported element type f8E4M3FN in tensor<4xf8E4M3FN>}}
  %0 = "nn.relu"(%x) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return
}

// -----

func.func @result_not_a_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu' op result: expected a ranked tensor, got f32}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> f32
  return
}

// -----

func.func @result_unranked(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu' op result: expected a ranked tensor, got tensor<*xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @result_dynamic(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu' op result type tensor<?xf32> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @result_unsupported_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.cast' op result: unsupported element type complex<f32> in tensor<4xcomplex<f32>>}}
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return
}

// -----

func.func @integer_element_type(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.relu' op operand #0 has element type i32; expected f32 or f16 or bf16}}
  %0 = "nn.relu"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @f64_element_type(%a: tensor<2x4xf32>, %x: tensor<4x2xf64>) {
  // expected-error @+1 {{'nn.matmul' op operand #1 has element type f64; expected f32 or f16 or bf16}}
  %0 = "nn.matmul"(%a, %x) : (tensor<2x4xf32>, tensor<4x2xf64>) -> tensor<2x2xf32>
  return
}

// -----

func.func @i1_element_type_for_arithmetic(%x: tensor<4xi1>) {
  // expected-error @+1 {{'nn.add' op operand #0 has element type i1; expected f32 or f16 or bf16}}
  %0 = "nn.add"(%x, %x) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @result_shape_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @result_element_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.sigmoid' op result type tensor<4xf16> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Each op is checked on its own: two bad ops give two errors.
func.func @two_errors(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  // expected-error @+1 {{'nn.exp' op result type tensor<3xf32> does not match the inferred type tensor<4xf32>}}
  %1 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<3xf32>
  return
}

// -----

// Errors inside nested regions are found too.
func.func @nested_in_region(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = scf.if %c -> tensor<4xf32> {
    // expected-error @+1 {{'nn.neg' op result type tensor<2x2xf32> does not match the inferred type tensor<4xf32>}}
    %1 = "nn.neg"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
    %2 = "nn.reshape"(%1) : (tensor<2x2xf32>) -> tensor<4xf32>
    scf.yield %2 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
