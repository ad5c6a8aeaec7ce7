// An f16 matmul with a bias and relu: what the cuda targets turn into hw
// kernels (tensor cores), and what the CPU compiles too.
//
//   lamina-compile examples/gemm_f16.mlir --target=cuda:sm_90a --emit=ptx
//   lamina-run examples/gemm_f16.mlir --target=cuda:sm_80 --emulate --random --check

func.func @main(%x: tensor<64x48xf16>, %w: tensor<48x40xf16>, %b: tensor<40xf16>) -> tensor<64x40xf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<64x48xf16>, tensor<48x40xf16>) -> tensor<64x40xf16>
  %1 = "nn.add"(%0, %b) : (tensor<64x40xf16>, tensor<40xf16>) -> tensor<64x40xf16>
  %2 = "nn.relu"(%1) : (tensor<64x40xf16>) -> tensor<64x40xf16>
  return %2 : tensor<64x40xf16>
}
