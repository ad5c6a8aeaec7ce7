// RUN: lamina-opt %s --split-input-file --verify-diagnostics

func.func @matmul_rank1(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{'nn.matmul' op matmul operands must have rank >= 2, got tensor<8xf32> and tensor<8x4xf32>}}
  %0 = "nn.matmul"(%a, %b) : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_rhs_rank0(%a: tensor<2x8xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'nn.matmul' op matmul operands must have rank >= 2, got tensor<2x8xf32> and tensor<f32>}}
  %0 = "nn.matmul"(%a, %b) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @matmul_contraction_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{'nn.matmul' op matmul contraction dims differ: 8 vs 7}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<3x4x8xf32>, %b: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'nn.matmul' op matmul batch dims are not broadcast-compatible: [3] vs [2]}}
  %0 = "nn.matmul"(%a, %b) : (tensor<3x4x8xf32>, tensor<2x8x16xf32>) -> tensor<3x4x16xf32>
  return
}

// -----

func.func @matmul_element_types_differ(%a: tensor<4x8xf32>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{'nn.matmul' op element types differ: f32 vs bf16}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xbf16>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_result_missing_batch(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'nn.matmul' op result type tensor<4x16xf32> does not match the inferred type tensor<2x4x16xf32>}}
  %0 = "nn.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_tf32_of_f16(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) {
  // expected-error @+1 {{'nn.matmul' op precision = "tf32" rounds f32 operands; these are f16}}
  %0 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  return
}

// -----

func.func @matmul_unknown_precision(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'nn.matmul' op attribute 'precision': "bf16x3" is not one of "f32", "tf32"}}
  %0 = "nn.matmul"(%a, %b) {precision = "bf16x3"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_i8_to_i8(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) {
  // expected-error @+1 {{'nn.matmul' op result type tensor<4x16xi8> does not match the inferred type tensor<4x16xi32>}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi8>
  return
}

// -----

func.func @matmul_i8_and_f32(%a: tensor<4x8xi8>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'nn.matmul' op element types differ: i8 vs f32}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x16xf32>) -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_i32(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'nn.matmul' op operand #0 has element type i32; expected f32 or f16 or bf16 or i8 or ui8}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xi32>, tensor<8x16xi32>) -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_i8_tf32(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) {
  // expected-error @+1 {{'nn.matmul' op precision = "tf32" rounds f32 operands; these are i8}}
  %0 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_i8_by_ui8(%a: tensor<4x8xi8>, %b: tensor<8x16xui8>) {
  // expected-error @+1 {{'nn.matmul' op integer operands must be i8 x i8, ui8 x i8; these are i8 x ui8}}
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x16xui8>) -> tensor<4x16xi32>
  return
}
