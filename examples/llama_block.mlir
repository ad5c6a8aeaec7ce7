// A Llama-style decoder block in bf16 on 37 tokens of width 96 (sizes no
// tile divides): RMSNorm, causal multi-head self-attention (3 heads of 32,
// the weights of the projections stored as PyTorch's nn.Linear keeps them,
// [out, in], and read transposed), a residual, RMSNorm again and a SwiGLU
// MLP (silu(x Wg) * (x Wu), then Wd) with its residual.
//
//   lamina-run examples/llama_block.mlir --random --check
//   lamina-run examples/llama_block.mlir --target=cuda:sm_90a --emulate --random --check

func.func @main(%x: tensor<1x37x96xbf16>, %g1: tensor<96xbf16>,
                %wq: tensor<96x96xbf16>, %wk: tensor<96x96xbf16>, %wv: tensor<96x96xbf16>,
                %wo: tensor<96x96xbf16>, %g2: tensor<96xbf16>,
                %wg: tensor<200x96xbf16>, %wu: tensor<200x96xbf16>, %wd: tensor<96x200xbf16>)
    -> tensor<1x37x96xbf16> {
  %n1 = "nn.rms_norm"(%x, %g1) {axis = -1 : i64, epsilon = 1.0e-6 : f64}
      : (tensor<1x37x96xbf16>, tensor<96xbf16>) -> tensor<1x37x96xbf16>
  %wqt = "nn.transpose"(%wq) {perm = array<i64: 1, 0>} : (tensor<96x96xbf16>) -> tensor<96x96xbf16>
  %wkt = "nn.transpose"(%wk) {perm = array<i64: 1, 0>} : (tensor<96x96xbf16>) -> tensor<96x96xbf16>
  %wvt = "nn.transpose"(%wv) {perm = array<i64: 1, 0>} : (tensor<96x96xbf16>) -> tensor<96x96xbf16>
  %q = "nn.matmul"(%n1, %wqt) : (tensor<1x37x96xbf16>, tensor<96x96xbf16>) -> tensor<1x37x96xbf16>
  %k = "nn.matmul"(%n1, %wkt) : (tensor<1x37x96xbf16>, tensor<96x96xbf16>) -> tensor<1x37x96xbf16>
  %v = "nn.matmul"(%n1, %wvt) : (tensor<1x37x96xbf16>, tensor<96x96xbf16>) -> tensor<1x37x96xbf16>
  %q4 = "nn.reshape"(%q) : (tensor<1x37x96xbf16>) -> tensor<1x37x3x32xbf16>
  %k4 = "nn.reshape"(%k) : (tensor<1x37x96xbf16>) -> tensor<1x37x3x32xbf16>
  %v4 = "nn.reshape"(%v) : (tensor<1x37x96xbf16>) -> tensor<1x37x3x32xbf16>
  %qh = "nn.transpose"(%q4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x37x3x32xbf16>) -> tensor<1x3x37x32xbf16>
  %kh = "nn.transpose"(%k4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x37x3x32xbf16>) -> tensor<1x3x37x32xbf16>
  %vh = "nn.transpose"(%v4) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x37x3x32xbf16>) -> tensor<1x3x37x32xbf16>
  %att = "nn.attention"(%qh, %kh, %vh) {causal = true}
      : (tensor<1x3x37x32xbf16>, tensor<1x3x37x32xbf16>, tensor<1x3x37x32xbf16>) -> tensor<1x3x37x32xbf16>
  %ah = "nn.transpose"(%att) {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x37x32xbf16>) -> tensor<1x37x3x32xbf16>
  %a = "nn.reshape"(%ah) : (tensor<1x37x3x32xbf16>) -> tensor<1x37x96xbf16>
  %wot = "nn.transpose"(%wo) {perm = array<i64: 1, 0>} : (tensor<96x96xbf16>) -> tensor<96x96xbf16>
  %proj = "nn.matmul"(%a, %wot) : (tensor<1x37x96xbf16>, tensor<96x96xbf16>) -> tensor<1x37x96xbf16>
  %r1 = "nn.add"(%x, %proj) : (tensor<1x37x96xbf16>, tensor<1x37x96xbf16>) -> tensor<1x37x96xbf16>
  %n2 = "nn.rms_norm"(%r1, %g2) {axis = -1 : i64, epsilon = 1.0e-6 : f64}
      : (tensor<1x37x96xbf16>, tensor<96xbf16>) -> tensor<1x37x96xbf16>
  %wgt = "nn.transpose"(%wg) {perm = array<i64: 1, 0>} : (tensor<200x96xbf16>) -> tensor<96x200xbf16>
  %wut = "nn.transpose"(%wu) {perm = array<i64: 1, 0>} : (tensor<200x96xbf16>) -> tensor<96x200xbf16>
  %wdt = "nn.transpose"(%wd) {perm = array<i64: 1, 0>} : (tensor<96x200xbf16>) -> tensor<200x96xbf16>
  %gate = "nn.matmul"(%n2, %wgt) : (tensor<1x37x96xbf16>, tensor<96x200xbf16>) -> tensor<1x37x200xbf16>
  %up = "nn.matmul"(%n2, %wut) : (tensor<1x37x96xbf16>, tensor<96x200xbf16>) -> tensor<1x37x200xbf16>
  %act = "nn.silu"(%gate) : (tensor<1x37x200xbf16>) -> tensor<1x37x200xbf16>
  %mix = "nn.mul"(%act, %up) : (tensor<1x37x200xbf16>, tensor<1x37x200xbf16>) -> tensor<1x37x200xbf16>
  %down = "nn.matmul"(%mix, %wdt) : (tensor<1x37x200xbf16>, tensor<200x96xbf16>) -> tensor<1x37x96xbf16>
  %r2 = "nn.add"(%r1, %down) : (tensor<1x37x96xbf16>, tensor<1x37x96xbf16>) -> tensor<1x37x96xbf16>
  return %r2 : tensor<1x37x96xbf16>
}
