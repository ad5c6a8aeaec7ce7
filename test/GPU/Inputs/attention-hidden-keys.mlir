// Masked attentions whose masks hide every key of some queries (inputs
// from attention-hidden-keys.py): f16 with the mask broadcast over the
// batch, causal f32.
func.func @main(%q: tensor<2x3x37x64xf16>, %k: tensor<2x3x100x64xf16>, %v: tensor<2x3x100x64xf16>, %m: tensor<3x37x100xf16>,
                %fq: tensor<2x37x16xf32>, %fk: tensor<2x50x16xf32>, %fv: tensor<2x50x16xf32>, %fm: tensor<2x37x50xf32>)
    -> (tensor<2x3x37x64xf16>, tensor<2x37x16xf32>) {
  %0 = "nn.attention"(%q, %k, %v, %m) : (tensor<2x3x37x64xf16>, tensor<2x3x100x64xf16>, tensor<2x3x100x64xf16>, tensor<3x37x100xf16>) -> tensor<2x3x37x64xf16>
  %1 = "nn.attention"(%fq, %fk, %fv, %fm) {causal = true} : (tensor<2x37x16xf32>, tensor<2x50x16xf32>, tensor<2x50x16xf32>, tensor<2x37x50xf32>) -> tensor<2x37x16xf32>
  return %0, %1 : tensor<2x3x37x64xf16>, tensor<2x37x16xf32>
}
