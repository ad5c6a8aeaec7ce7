// RUN: lamina-opt %s --split-input-file --verify-diagnostics --cpu-schedule='threads=1'

// A tuned choice names fields of the CPU model only.
func.func @unknown_field(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'lamina.schedule_choice' has no field 'registers' (fields: vector_bits, vector_registers, l1_bytes, l2_bytes, threads, unroll)}}
  %r = linalg.matmul {lamina.schedule_choice = {registers = 16 : i64}}
                     ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @not_a_dictionary(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'lamina.schedule_choice' must be a dictionary of CPU model fields, got 16 : i64}}
  %r = linalg.matmul {lamina.schedule_choice = 16 : i64}
                     ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @not_positive(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'lamina.schedule_choice' field 'unroll' must be a positive integer, got 0 : i64}}
  %r = linalg.matmul {lamina.schedule_choice = {unroll = 0 : i64}}
                     ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
