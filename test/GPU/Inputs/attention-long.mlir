// Long sequences, compiled only (their emulation is slow): GPT-2-sized
// causal heads (12 of 64, 1024 tokens) in f16, Llama-sized ones (32 of 128,
// 2048 tokens) in bf16, and a padding mask over 512 keys.
func.func @main(%q: tensor<1x12x1024x64xf16>, %k: tensor<1x12x1024x64xf16>, %v: tensor<1x12x1024x64xf16>,
                %lq: tensor<1x32x2048x128xbf16>, %lk: tensor<1x32x2048x128xbf16>, %lv: tensor<1x32x2048x128xbf16>,
                %mq: tensor<4x8x512x64xf16>, %mk: tensor<4x8x512x64xf16>, %mv: tensor<4x8x512x64xf16>, %m: tensor<4x1x512x512xf16>)
    -> (tensor<1x12x1024x64xf16>, tensor<1x32x2048x128xbf16>, tensor<4x8x512x64xf16>) {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16>
  %1 = "nn.attention"(%lq, %lk, %lv) {causal = true} : (tensor<1x32x2048x128xbf16>, tensor<1x32x2048x128xbf16>, tensor<1x32x2048x128xbf16>) -> tensor<1x32x2048x128xbf16>
  %2 = "nn.attention"(%mq, %mk, %mv, %m) : (tensor<4x8x512x64xf16>, tensor<4x8x512x64xf16>, tensor<4x8x512x64xf16>, tensor<4x1x512x512xf16>) -> tensor<4x8x512x64xf16>
  return %0, %1, %2 : tensor<1x12x1024x64xf16>, tensor<1x32x2048x128xbf16>, tensor<4x8x512x64xf16>
}
