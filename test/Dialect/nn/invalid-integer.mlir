// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Integer tensors and the ops that index with them: gather, iota, cumsum, argmax.

func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'nn.gather' op operand #1 has element type f32; expected i32 or i64}}
  %0 = "nn.gather"(%t, %i) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_axis_out_of_range(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'nn.gather' op axis 2 is out of range for rank 2}}
  %0 = "nn.gather"(%t, %i) {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_wrong_result(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{'nn.gather' op result type tensor<6x4xf32> does not match the inferred type tensor<2x3x4xf32>}}
  %0 = "nn.gather"(%t, %i) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<6x4xf32>
  return
}

// -----

func.func @gather_from_empty_axis(%t: tensor<0x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'nn.gather' op gather from an empty axis of tensor<0x4xf32>}}
  %0 = "nn.gather"(%t, %i) {axis = 0 : i64} : (tensor<0x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @iota_axis_out_of_range() {
  // expected-error @+1 {{'nn.iota' op axis 1 is out of range for rank 1}}
  %0 = "nn.iota"() {axis = 1 : i64} : () -> tensor<8xi64>
  return
}

// -----

func.func @iota_of_booleans() {
  // expected-error @+1 {{'nn.iota' op cannot make indices of element type i1}}
  %0 = "nn.iota"() {axis = 0 : i64} : () -> tensor<8xi1>
  return
}

// -----

func.func @cumsum_of_booleans(%x: tensor<8xi1>) {
  // expected-error @+1 {{'nn.cumsum' op operand #0 has element type i1; expected f32 or f16 or bf16 or i32 or i64}}
  %0 = "nn.cumsum"(%x) {axis = 0 : i64} : (tensor<8xi1>) -> tensor<8xi1>
  return
}

// -----

func.func @argmax_not_i64(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.argmax' op result has element type i32; expected i64}}
  %0 = "nn.argmax"(%x) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2xi32>
  return
}

// -----

func.func @argmax_empty_axis(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{'nn.argmax' op argmax along an empty axis of tensor<2x0xf32>}}
  %0 = "nn.argmax"(%x) {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2xi64>
  return
}

// -----

func.func @integer_division(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.div' op operand #0 has element type i32; expected f32 or f16 or bf16}}
  %0 = "nn.div"(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @integer_sine(%x: tensor<4xi64>) {
  // expected-error @+1 {{'nn.sin' op operand #0 has element type i64; expected f32 or f16 or bf16}}
  %0 = "nn.sin"(%x) : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @compare_booleans(%x: tensor<4xi1>) {
  // expected-error @+1 {{'nn.compare' op operand #0 has element type i1; expected f32 or f16 or bf16 or f64 or i32 or i64}}
  %0 = "nn.compare"(%x, %x) {predicate = "eq"} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @mixed_integer_widths(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'nn.add' op element types differ: i32 vs i64}}
  %0 = "nn.add"(%x, %y) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @bitwise_of_floats(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.bitwise_and' op operand #0 has element type f32; expected i32 or i64}}
  %0 = "nn.bitwise_and"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @remainder_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{'nn.remainder' op operand #0 has element type i32; expected f32 or f16 or bf16 or f64}}
  %0 = "nn.remainder"(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}
