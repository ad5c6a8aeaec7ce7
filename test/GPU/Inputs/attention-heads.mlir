// GPT-sized (12 heads of 64, 128 tokens, causal) and Llama-sized (8 heads
// of 128, 128 tokens, causal) attention heads in f16 and bf16 at batch 2
// and 1, and a bf16 cross-attention with D = 64, Dv = 128.
func.func @main(%q: tensor<2x12x128x64xf16>, %k: tensor<2x12x128x64xf16>, %v: tensor<2x12x128x64xf16>,
                %lq: tensor<1x8x128x128xbf16>, %lk: tensor<1x8x128x128xbf16>, %lv: tensor<1x8x128x128xbf16>,
                %cq: tensor<1x2x37x64xbf16>, %ck: tensor<1x2x128x64xbf16>, %cv: tensor<1x2x128x128xbf16>)
    -> (tensor<2x12x128x64xf16>, tensor<1x8x128x128xbf16>, tensor<1x2x37x128xbf16>) {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>, tensor<2x12x128x64xf16>) -> tensor<2x12x128x64xf16>
  %1 = "nn.attention"(%lq, %lk, %lv) {causal = true} : (tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>) -> tensor<1x8x128x128xbf16>
  %2 = "nn.attention"(%cq, %ck, %cv) : (tensor<1x2x37x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x128xbf16>) -> tensor<1x2x37x128xbf16>
  return %0, %1, %2 : tensor<2x12x128x64xf16>, tensor<1x8x128x128xbf16>, tensor<1x2x37x128xbf16>
}
