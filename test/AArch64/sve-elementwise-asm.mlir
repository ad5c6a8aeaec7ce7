// An elementwise loop nest (37 columns: no vector length divides them) on
// SVE of any length (cpu:aarch64+sve): the loop steps by a multiple of
// the vector length read at run time (`rdvl`), every load and store is
// predicated by the step's mask (the tail's included) and exp is a
// polynomial on z registers, not a libm call. On NEON (cpu:aarch64) no
// vector of 4, 8 or 16 lanes divides 37 and the fixed schedules leave the
// loop scalar: `expf` per element, no SVE instruction.
// RUN: lamina-compile %s --target=cpu:aarch64+sve --emit=asm | FileCheck %s --check-prefix=SVE
// RUN: lamina-compile %s --target=cpu:aarch64 --emit=asm | FileCheck %s --check-prefix=NEON

// SVE-LABEL: _mlir_ciface_main:
// SVE-NOT: expf
// SVE: rdvl
// SVE: ld1w { z{{[0-9]+}}.s }, p{{[0-9]+}}/z
// SVE: fadd z{{[0-9]+}}.s
// SVE: st1w { z{{[0-9]+}}.s }, p{{[0-9]+}}
// SVE-NOT: expf

// NEON-LABEL: _mlir_ciface_main:
// NEON-NOT: z{{[0-9]+}}.s
// NEON: fadd s{{[0-9]+}}, s{{[0-9]+}}, s{{[0-9]+}}
// NEON: bl expf
// NEON-NOT: z{{[0-9]+}}.s
func.func @main(%a: tensor<5x37xf32>, %b: tensor<37xf32>) -> tensor<5x37xf32> {
  %0 = "nn.add"(%a, %b) : (tensor<5x37xf32>, tensor<37xf32>) -> tensor<5x37xf32>
  %1 = "nn.relu"(%0) : (tensor<5x37xf32>) -> tensor<5x37xf32>
  %2 = "nn.exp"(%1) : (tensor<5x37xf32>) -> tensor<5x37xf32>
  return %2 : tensor<5x37xf32>
}
