// The AArch64 assembly of a matmul's register tile: on NEON (cpu:aarch64,
// 128-bit vectors, 32 registers) the innermost loop is an 8x8 tile of
// 16 `fmla` by element (rows of A as scalars, two 4-lane vectors of B's
// packed panel), loads and the loop's bookkeeping: no spill to the stack,
// no SVE instruction; on SVE code for 256-bit vectors (cpu:aarch64-sve256)
// the same tile is predicated SVE `fmla` on z registers. An x86 target
// gives no AArch64 code.
// RUN: lamina-compile %s --target=cpu:aarch64 --emit=asm | FileCheck %s --check-prefix=NEON
// RUN: lamina-compile %s --target=cpu:neoverse-n1 --emit=asm | FileCheck %s --check-prefix=NEON
// RUN: lamina-compile %s --target=cpu:aarch64-sve256 --emit=asm | FileCheck %s --check-prefix=SVE
// RUN: lamina-compile %s --target=cpu:x86-64-v3,threads=1 --emit=asm | FileCheck %s --check-prefix=X86

// NEON-LABEL: _mlir_ciface_main:
// NEON: This Inner Loop Header: Depth=3
// NEON-NOT: sp
// NEON-COUNT-16: fmla v{{[0-9]+}}.4s, v{{[0-9]+}}.4s, v{{[0-9]+}}.{{(s\[0\]|4s)}}
// NEON-NEXT: b.ne
// NEON-NOT: z{{[0-9]+}}.s

// SVE-LABEL: _mlir_ciface_main:
// SVE: ptrue p{{[0-9]+}}.s
// SVE: This Inner Loop Header: Depth=3
// SVE-NOT: sp
// SVE-COUNT-16: fmla z{{[0-9]+}}.s, p{{[0-9]+}}/m, z{{[0-9]+}}.s, z{{[0-9]+}}.s
// SVE-NEXT: b.ne

// X86-LABEL: _mlir_ciface_main:
// X86-NOT: fmla
// X86: vfmadd
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
