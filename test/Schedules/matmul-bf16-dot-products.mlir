// bf16 matmuls on a CPU whose AVX512-BF16 dot product is faster than its
// f32 FMAs (znver4, znver5): k is packed in pairs (B's panels [N/32, K/2,
// 32, 2]), the register tile's rows and vectors are unrolled into one-row
// contractions that upstream rewrites into x86vector.avx512.dot, and the
// assembly multiplies with vdpbf16ps. On a CPU without the instruction
// (icelake-server), or whose FMAs are faster (sapphirerapids), the matmul
// is widened to f32 and computed with FMAs. (Checked for pinned CPUs, on
// any host.)
// RUN: lamina-compile %s --target=cpu:znver5,threads=1 --emit=schedule | FileCheck %s --check-prefix=SCRIPT
// RUN: lamina-compile %s --target=cpu:znver5,threads=1 --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: lamina-compile %s --target=cpu:znver5,threads=1 --emit=asm | FileCheck %s --check-prefix=DOT
// RUN: lamina-compile %s --target=cpu:znver4,threads=2 --emit=asm | FileCheck %s --check-prefix=DOT
// RUN: lamina-compile %s --target=cpu:icelake-server,threads=1 --emit=schedule | FileCheck %s --check-prefix=WIDE-SCRIPT
// RUN: lamina-compile %s --target=cpu:icelake-server,threads=1 --emit=asm | FileCheck %s --check-prefix=WIDE
// RUN: lamina-compile %s --target=cpu:sapphirerapids,threads=1 --emit=asm | FileCheck %s --check-prefix=WIDE

// SCRIPT-LABEL: func.func @matmul
// SCRIPT: linalg.matmul {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x96xbf16>, tensor<96x128xbf16>) outs(%{{.+}} : tensor<64x128xf32>)
// SCRIPT: transform.structured.pack %{{.+}} packed_sizes = [0, 32, 2]
// SCRIPT: transform.apply_patterns.vector.fold_arith_extension
// SCRIPT: transform.loop.unroll %{{.+}} {factor = 2 : i64}
// SCRIPT: transform.loop.unroll %{{.+}} {factor = 8 : i64}
// SCRIPT: transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product

// The k loop carries the 16 accumulators as vectors; B's rows of pairs
// are read as single vectors of 32 bf16.
// TILED-LABEL: func.func @matmul
// TILED: scf.for {{.*}} -> (vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>, vector<1x1x16xf32>)
// TILED: tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<4x48x32x2xbf16> into tensor<4x48x64xbf16>
// TILED: vector.transfer_read {{.*}} : tensor<4x48x64xbf16>, vector<32xbf16>
// TILED-COUNT-16: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// TILED-NOT: vector.contract

// DOT-COUNT-16: vdpbf16ps {{.*}}%zmm
// DOT-NOT: vfmadd{{.*}}ps

// WIDE-SCRIPT-LABEL: func.func @matmul
// WIDE-SCRIPT: linalg.matmul {{.*}} ins(%{{.+}}, %{{.+}} : tensor<64x96xf32>, tensor<96x128xf32>)
// WIDE-SCRIPT: transform.structured.pack %{{.+}} packed_sizes = [0, 32, 0]
// WIDE-SCRIPT-NOT: x86vector

// WIDE-LABEL: _mlir_ciface_matmul:
// WIDE-NOT: vdpbf16ps
// WIDE: vfmadd{{.*}}ps {{.*}}%zmm
// WIDE-NOT: vdpbf16ps
func.func @matmul(%a: tensor<64x96xbf16>, %b: tensor<96x128xbf16>) -> tensor<64x128xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x96xbf16>, tensor<96x128xbf16>) -> tensor<64x128xbf16>
  return %0 : tensor<64x128xbf16>
}
