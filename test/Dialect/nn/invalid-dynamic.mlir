// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// What the static dims disprove is an error at compile time.

func.func @broadcast_static_mismatch(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) {
  // expected-error @+1 {{'nn.add' op operands are not broadcast-compatible: ?x4 vs ?x5}}
  %0 = "nn.add"(%a, %b) : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @broadcast_result_less_precise(%a: tensor<?x4xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{'nn.add' op result type tensor<?x4xf32> does not match the inferred type tensor<8x4xf32>}}
  %0 = "nn.add"(%a, %b) : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @matmul_static_contraction(%a: tensor<?x256xf32>, %b: tensor<128x?xf32>) {
  // expected-error @+1 {{'nn.matmul' op matmul contraction dims differ: 256 vs 128}}
  %0 = "nn.matmul"(%a, %b) : (tensor<?x256xf32>, tensor<128x?xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<?x768xf32>, %g: tensor<512xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op gamma must have shape [768] (the normalised dims), got tensor<512xf32>}}
  %0 = "nn.layer_norm"(%x, %g, %g) : (tensor<?x768xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @reshape_two_new_dims(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'nn.reshape' op reshape of tensor<?x768xf32> to tensor<?x?x?x64xf32>: the result may have one '?' dim beyond the leading ones it keeps from the operand}}
  %0 = "nn.reshape"(%x) : (tensor<?x768xf32>) -> tensor<?x?x?x64xf32>
  return
}

// -----

func.func @reshape_resolved_dim(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'nn.reshape' op result type tensor<?x?x64xf32> does not match the inferred type tensor<?x12x64xf32>}}
  %0 = "nn.reshape"(%x) : (tensor<?x768xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<?x768xf32>) {
  // expected-error @+1 {{'nn.reshape' op reshape changes the element count: tensor<?x768xf32> has 768 per leading '?' dim, tensor<?x12x32xf32> has 384}}
  %0 = "nn.reshape"(%x) : (tensor<?x768xf32>) -> tensor<?x12x32xf32>
  return
}

// -----

func.func @static_only_op(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.conv2d' op operand #0: dim 0 of tensor<?x3x8x8xf32> is dynamic ('?'); 'nn.conv2d' takes statically shaped tensors only}}
  %0 = "nn.conv2d"(%x, %w) : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x4x6x6xf32>
  return
}
