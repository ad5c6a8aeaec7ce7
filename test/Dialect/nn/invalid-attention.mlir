// RUN: lamina-opt %s --split-input-file --verify-diagnostics

func.func @q_rank1(%q: tensor<8xf32>, %k: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention q must have rank >= 2, got tensor<8xf32>}}
  %0 = "nn.attention"(%q, %k, %k) : (tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @k_rank1(%q: tensor<4x8xf32>, %k: tensor<8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention k must have rank >= 2, got tensor<8xf32>}}
  %0 = "nn.attention"(%q, %k, %q) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @v_rank0(%q: tensor<4x8xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.attention' op attention v must have rank >= 2, got tensor<f32>}}
  %0 = "nn.attention"(%q, %q, %v) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @ranks_differ(%q: tensor<2x4x8xf32>, %k: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention q, k and v ranks differ: 3, 2, 2}}
  %0 = "nn.attention"(%q, %k, %k) : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @batch_dims_differ(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention batch dims differ: q [2], k [3], v [3]}}
  %0 = "nn.attention"(%q, %k, %k) : (tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @head_dims_differ(%q: tensor<4x8xf32>, %k: tensor<4x16xf32>) {
  // expected-error @+1 {{'nn.attention' op attention head dims of q and k differ: 8 vs 16}}
  %0 = "nn.attention"(%q, %k, %k) : (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @key_value_lengths_differ(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<5x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention key and value lengths differ: 6 vs 5}}
  %0 = "nn.attention"(%q, %k, %v) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<5x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @mask_does_not_broadcast(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %m: tensor<4x5xf32>) {
  // expected-error @+1 {{'nn.attention' op attention mask tensor<4x5xf32> does not broadcast to the scores [4x6]}}
  %0 = "nn.attention"(%q, %k, %k, %m) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return
}

// -----

// A mask may broadcast to the scores, not the scores to the mask.
func.func @mask_larger_than_scores(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %m: tensor<2x4x6xf32>) {
  // expected-error @+1 {{'nn.attention' op attention mask tensor<2x4x6xf32> does not broadcast to the scores [4x6]}}
  %0 = "nn.attention"(%q, %k, %k, %m) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<2x4x6xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @mask_element_type(%q: tensor<4x8xf32>, %m: tensor<4x4xf16>) {
  // expected-error @+1 {{'nn.attention' op element types differ: f32 vs f32 vs f32 vs f16}}
  %0 = "nn.attention"(%q, %q, %q, %m) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @boolean_mask(%q: tensor<4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{'nn.attention' op operand #3 has element type i1; expected f32 or f16 or bf16}}
  %0 = "nn.attention"(%q, %q, %q, %m) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xi1>) -> tensor<4x8xf32>
  return
}

// -----

func.func @causal_of_wrong_kind(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attribute 'causal' must be a bool, got 1 : i64}}
  %0 = "nn.attention"(%q, %q, %q) {causal = 1} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @scale_of_wrong_kind(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attribute 'scale' must be a float, got "auto"}}
  %0 = "nn.attention"(%q, %q, %q) {scale = "auto"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @result_uses_value_dim(%q: tensor<4x8xf32>, %v: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.attention' op result type tensor<4x8xf32> does not match the inferred type tensor<4x2xf32>}}
  %0 = "nn.attention"(%q, %q, %v) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @no_head_dim_no_scale(%q: tensor<4x0xf32>, %k: tensor<6x0xf32>, %v: tensor<6x8xf32>) {
  // expected-error @+1 {{'nn.attention' op attention with a head dim of 0 needs a scale (the default 1/sqrt(D) is undefined)}}
  %0 = "nn.attention"(%q, %k, %v) : (tensor<4x0xf32>, tensor<6x0xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return
}
