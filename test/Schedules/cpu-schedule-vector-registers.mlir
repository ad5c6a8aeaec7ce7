// The register tile of a matmul follows the target model's vector unit,
// given to cpu-schedule as options: 128-bit vectors (NEON) in 32 registers
// take an 8x8 tile (8 rows of two 4-lane vectors: 16 accumulators), in 16
// registers (128-bit x86) a 4x8 one; the L1 size sets the k-block (none where all of k fits).
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128 vector-registers=32 l1-bytes=65536' | FileCheck %s --check-prefix=NEON
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128' | FileCheck %s --check-prefix=SSE
// RUN: lamina-opt %s --split-input-file --cpu-schedule='threads=1 vector-bits=128 vector-registers=32 l1-bytes=4096' | FileCheck %s --check-prefix=SMALL

// NEON-LABEL: func.func @matmul
// NEON: transform.structured.pack %{{.+}} packed_sizes = [0, 8, 0]
// NEON-NOT: tile_sizes [0, 0, {{[0-9]+}}, 0]
// NEON: transform.structured.tile_using_for %{{.+}} tile_sizes [8, 1, 1, 0]
// SSE-LABEL: func.func @matmul
// SSE: transform.structured.pack %{{.+}} packed_sizes = [0, 8, 0]
// SSE: transform.structured.tile_using_for %{{.+}} tile_sizes [4, 1, 1, 0]
// SSE-NOT: tile_sizes [8, 1, 1, 0]
// SMALL-LABEL: func.func @matmul
// SMALL: transform.structured.tile_using_for %{{.+}} tile_sizes [0, 0, 64, 0]
// SMALL: transform.structured.tile_using_for %{{.+}} tile_sizes [8, 1, 1, 0]
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
