// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Unary and binary elementwise ops, compare, select and cast.

func.func @unary_result_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.gelu' op result type tensor<3x2xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = "nn.gelu"(%x) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @unary_i1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'nn.silu' op operand #0 has element type i1; expected f32 or f16 or bf16}}
  %0 = "nn.silu"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @binary_not_broadcastable(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.add' op operands are not broadcast-compatible: 2x3 vs 4}}
  %0 = "nn.add"(%x, %y) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @binary_not_broadcastable_inner(%x: tensor<2x3x4xf32>, %y: tensor<5x1xf32>) {
  // expected-error @+1 {{'nn.pow' op operands are not broadcast-compatible: 2x3x4 vs 5x1}}
  %0 = "nn.pow"(%x, %y) : (tensor<2x3x4xf32>, tensor<5x1xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @binary_element_types_differ(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'nn.mul' op element types differ: f32 vs f16}}
  %0 = "nn.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @binary_result_not_broadcast_shape(%x: tensor<2x1xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'nn.sub' op result type tensor<2x1xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = "nn.sub"(%x, %y) : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @binary_rank0_result(%x: tensor<f32>, %y: tensor<f32>) {
  // expected-error @+1 {{'nn.maximum' op result type tensor<1xf32> does not match the inferred type tensor<f32>}}
  %0 = "nn.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<1xf32>
  return
}

// -----

func.func @compare_result_not_i1(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op result type tensor<4xf32> does not match the inferred type tensor<4xi1>}}
  %0 = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_not_broadcastable(%x: tensor<4xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'nn.compare' op operands are not broadcast-compatible: 4 vs 3}}
  %0 = "nn.compare"(%x, %y) {predicate = "eq"} : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_predicate_of_wrong_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op attribute 'predicate' must be one of "eq", "ne", "lt", "le", "gt", "ge", got 2 : i64}}
  %0 = "nn.compare"(%x, %x) {predicate = 2} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @select_condition_not_i1(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op operand #0 has element type f32; expected i1}}
  %0 = "nn.select"(%c, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_branches_differ(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xbf16>) {
  // expected-error @+1 {{'nn.select' op element types differ: f32 vs bf16}}
  %0 = "nn.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @select_not_broadcastable(%c: tensor<3xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op operands are not broadcast-compatible: 3 vs 4 vs 4}}
  %0 = "nn.select"(%c, %x, %y) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_result_mismatch(%c: tensor<2x1xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op result type tensor<4xf32> does not match the inferred type tensor<2x4xf32>}}
  %0 = "nn.select"(%c, %x, %y) : (tensor<2x1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_i8_branches(%c: tensor<4xi1>, %x: tensor<4xi8>) {
  // expected-error @+1 {{'nn.select' op operand #1 has element type i8; expected f32 or f16 or bf16 or f64 or i32 or i64 or i1}}
  %0 = "nn.select"(%c, %x, %x) : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return
}

// -----

func.func @cast_to_unsupported_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.cast' op result: unsupported element type si16 in tensor<4xsi16>}}
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xsi16>
  return
}

// -----

func.func @cast_from_unsupported_type(%x: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{'nn.cast' op operand #0: unsupported element type f8E4M3FN in tensor<4xf8E4M3FN>}}
  %0 = "nn.cast"(%x) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'nn.cast' op cast changes the shape: tensor<2x2xf32> to tensor<4xf16>}}
  %0 = "nn.cast"(%x) : (tensor<2x2xf32>) -> tensor<4xf16>
  return
}
