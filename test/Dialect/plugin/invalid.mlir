// RUN: lamina-opt --load-plugin=%S/Inputs/plugtest.py %s --split-input-file --verify-diagnostics

// The Python rules of a plugin's ops: memory spaces, element types,
// result counts and type rules, each reported at the op, by name.

func.func @fill_global_memory(%t: memref<16x16xf16>) {
  // expected-error @+1 {{'plugtest.fill_shared' op operand #0 is in global memory; expected workgroup memory (#gpu.address_space<workgroup>)}}
  "plugtest.fill_shared"(%t) : (memref<16x16xf16>) -> ()
  return
}

// -----

func.func @fill_wrong_element_type(%t: memref<16xi32, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'plugtest.fill_shared' op operand #0 has element type i32; expected f16 or f32}}
  "plugtest.fill_shared"(%t) : (memref<16xi32, #gpu.address_space<workgroup>>) -> ()
  return
}

// -----

func.func @fill_private_memory(%t: memref<16xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{'plugtest.fill_shared' op operand #0 is in private memory; expected workgroup memory}}
  "plugtest.fill_shared"(%t) : (memref<16xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{unregistered operation 'plugtest.nothing' found in dialect ('plugtest'), which has no such op}}
  "plugtest.nothing"(%x) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @unknown_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{type '!plugtest.nothing' is not a type of the plugtest dialect}}
  %lo, %hi, %done = "plugtest.split"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, !plugtest.nothing)
  return
}

// -----

func.func @split_odd(%x: tensor<2x7xf32>) {
  // expected-error @+1 {{'plugtest.split' op the last dim of tensor<2x7xf32> must be even}}
  %lo, %hi, %done = "plugtest.split"(%x) : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>, !plugtest.token)
  return
}

// -----

func.func @split_wrong_halves(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'plugtest.split' op result type tensor<2x4xf32>, tensor<2x5xf32>, !plugtest.token does not match the inferred type tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token}}
  %lo, %hi, %done = "plugtest.split"(%x) : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x5xf32>, !plugtest.token)
  return
}

// -----

// The values of a variadic group may differ in type.
func.func @invoke_mixed(%x: tensor<4xf32>, %h: tensor<2x2xf16>) -> tensor<2x2xf16> {
  %y:2 = "plugtest.invoke"(%x, %h) {callee = @k} : (tensor<4xf32>, tensor<2x2xf16>) -> (tensor<4xf32>, tensor<2x2xf16>)
  return %y#1 : tensor<2x2xf16>
}

// -----

func.func @invoke_bf16(%x: tensor<4xbf16>) {
  // expected-error @+1 {{'plugtest.invoke' op result #1 has element type bf16; expected f32 or f16}}
  %y:2 = "plugtest.invoke"(%x, %x) {callee = @k} : (tensor<4xbf16>, tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>)
  return
}

// -----

func.func @tanh_shift_too_long(%x: tensor<4xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'plugtest.scaled_tanh' op shift tensor<3xf32> does not broadcast to tensor<4xf32>}}
  %y = "plugtest.scaled_tanh"(%x, %s) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}
