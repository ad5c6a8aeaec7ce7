// A pre-norm transformer block on a sequence of 16 tokens of width 64:
// causal multi-head self-attention (4 heads of 16) and a GELU MLP, each
// with a residual connection.
//
//   lamina-run examples/attention.mlir --random --check

func.func @main(%x: tensor<1x16x64xf32>,
                %ln1_g: tensor<64xf32>, %ln1_b: tensor<64xf32>,
                %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>,
                %wo: tensor<64x64xf32>,
                %ln2_g: tensor<64xf32>, %ln2_b: tensor<64xf32>,
                %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
                %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<1x16x64xf32> {
  // Attention.
  %n1 = "nn.layer_norm"(%x, %ln1_g, %ln1_b) {axis = -1 : i64}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  %q = "nn.matmul"(%n1, %wq) : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  %k = "nn.matmul"(%n1, %wk) : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  %v = "nn.matmul"(%n1, %wv) : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  %q4 = "nn.reshape"(%q) : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
  %k4 = "nn.reshape"(%k) : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
  %v4 = "nn.reshape"(%v) : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
  %qh = "nn.transpose"(%q4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %kh = "nn.transpose"(%k4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %vh = "nn.transpose"(%v4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %att = "nn.attention"(%qh, %kh, %vh) {causal = true}
      : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %ah = "nn.transpose"(%att) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
  %a = "nn.reshape"(%ah) : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
  %proj = "nn.matmul"(%a, %wo) : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
  %r1 = "nn.add"(%x, %proj) : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  // MLP.
  %n2 = "nn.layer_norm"(%r1, %ln2_g, %ln2_b) {axis = -1 : i64}
      : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  %h = "nn.matmul"(%n2, %w1) : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<1x16x256xf32>, tensor<256xf32>) -> tensor<1x16x256xf32>
  %g = "nn.gelu"(%hb) {approximate = "tanh"} : (tensor<1x16x256xf32>) -> tensor<1x16x256xf32>
  %o = "nn.matmul"(%g, %w2) : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
  %ob = "nn.add"(%o, %b2) : (tensor<1x16x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  %r2 = "nn.add"(%r1, %ob) : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  return %r2 : tensor<1x16x64xf32>
}
