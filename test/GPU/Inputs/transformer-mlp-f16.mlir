// The feed-forward halves of two transformer blocks in f16, attention left
// out: a GPT-style one (layer_norm, a linear layer with gelu, a second
// linear layer, the residual) and a Llama-style one (rms_norm, SwiGLU:
// silu(x Wg) * (x Wu), a down projection, the residual), then a softmax
// over the vocabulary's logits. Sequence 50, model dim 96, hidden 200: no
// tile divides them.
func.func @main(%x: tensor<50x96xf16>, %g1: tensor<96xf16>, %b1: tensor<96xf16>,
                %w1: tensor<96x200xf16>, %c1: tensor<200xf16>, %w2: tensor<200x96xf16>,
                %c2: tensor<96xf16>, %g2: tensor<96xf16>, %wg: tensor<96x200xf16>,
                %wu: tensor<96x200xf16>, %wd: tensor<200x96xf16>, %wv: tensor<96x130xf16>)
    -> tensor<50x130xf16> {
  %n1 = "nn.layer_norm"(%x, %g1, %b1) {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<50x96xf16>, tensor<96xf16>, tensor<96xf16>) -> tensor<50x96xf16>
  %h1 = "nn.matmul"(%n1, %w1) : (tensor<50x96xf16>, tensor<96x200xf16>) -> tensor<50x200xf16>
  %h2 = "nn.add"(%h1, %c1) : (tensor<50x200xf16>, tensor<200xf16>) -> tensor<50x200xf16>
  %h3 = "nn.gelu"(%h2) {approximate = "tanh"} : (tensor<50x200xf16>) -> tensor<50x200xf16>
  %h4 = "nn.matmul"(%h3, %w2) : (tensor<50x200xf16>, tensor<200x96xf16>) -> tensor<50x96xf16>
  %h5 = "nn.add"(%h4, %c2) : (tensor<50x96xf16>, tensor<96xf16>) -> tensor<50x96xf16>
  %r1 = "nn.add"(%x, %h5) : (tensor<50x96xf16>, tensor<50x96xf16>) -> tensor<50x96xf16>
  %n2 = "nn.rms_norm"(%r1, %g2) {axis = -1 : i64, epsilon = 1.0e-6 : f64} : (tensor<50x96xf16>, tensor<96xf16>) -> tensor<50x96xf16>
  %gate = "nn.matmul"(%n2, %wg) : (tensor<50x96xf16>, tensor<96x200xf16>) -> tensor<50x200xf16>
  %up = "nn.matmul"(%n2, %wu) : (tensor<50x96xf16>, tensor<96x200xf16>) -> tensor<50x200xf16>
  %act = "nn.silu"(%gate) : (tensor<50x200xf16>) -> tensor<50x200xf16>
  %mix = "nn.mul"(%act, %up) : (tensor<50x200xf16>, tensor<50x200xf16>) -> tensor<50x200xf16>
  %down = "nn.matmul"(%mix, %wd) : (tensor<50x200xf16>, tensor<200x96xf16>) -> tensor<50x96xf16>
  %r2 = "nn.add"(%r1, %down) : (tensor<50x96xf16>, tensor<50x96xf16>) -> tensor<50x96xf16>
  %logits = "nn.matmul"(%r2, %wv) : (tensor<50x96xf16>, tensor<96x130xf16>) -> tensor<50x130xf16>
  %p = "nn.softmax"(%logits) {axis = -1 : i64} : (tensor<50x130xf16>) -> tensor<50x130xf16>
  return %p : tensor<50x130xf16>
}
