// RUN: lamina-compile %s --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=CHECKED
// RUN: sed 's/xf32>/xbf16>/g' %s > %t.bf16.mlir
// RUN: lamina-run %t.bf16.mlir --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=CHECKED
// RUN: lamina-run %s --load-plugin=%S/Inputs/softsign.py --target=cpu --random --check -q | FileCheck %s --check-prefix=CHECKED
// RUN: lamina-compile %s --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_80 --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
// RUN: lamina-compile %s --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_90a --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
// RUN: sed 's/100x72x/7200x/g' %s > %t.1d.mlir
// RUN: not lamina-compile %t.1d.mlir --load-plugin=%S/Inputs/softsign.py --target=cuda:sm_80 --emit=hw -o %t.1d.hw 2>&1 | FileCheck %s --check-prefix=DECLINED
// RUN: test ! -e %t.1d.hw

// A plugin op in the scalar form, `x / (1 + |x|)`, that registers its
// own nn->hw lowering (`@lowering(SoftsignOp, to="hw")`, Inputs/softsign.py)
// the way a CPU lowering is registered: convert-nn-to-hw offers it the op,
// and the kernel it builds computes with `hw.elementwise {fn =
// "nn.softsign"}`, the op's expression on register tiles. The emulation
// (f32 on sm_80, bf16 on sm_90a) and the CPU target match the NumPy
// reference; the GPU code divides by 1 + |x| for each of the 8 elements
// a thread holds (32x32 tiles, 128 threads) and ptxas accepts it. A 1-d
// tensor the lowering declines is left to the pass's error at the op.

// HW-LABEL: func.func @main(
// HW: "hw.launch"(%{{.+}}, %{{.+}}) {block = array<i64: 128>, grid = array<i64: 4, 3>, kernel = @main_softsign_0}
// HW-NOT: nn.softsign"(
// HW-LABEL: func.func private @main_softsign_0(
// HW: "hw.copy"
// HW: "hw.elementwise"(%[[T:.+]], %[[T]]) {fn = "nn.softsign"} : (memref<32x32xf32, #gpu.address_space<private>>, memref<32x32xf32, #gpu.address_space<private>>) -> ()
// HW: "hw.store"

// CHECKED: check: all results match the reference

// PTX-LABEL: .entry main_softsign_0(
// PTX-COUNT-8: div.rn.f32
// PTX: ret;

// DECLINED: :[[# @LINE + 3]]:8: error: 'nn.softsign' is not lowered to hw kernels

func.func @main(%x: tensor<100x72xf32>) -> tensor<100x72xf32> {
  %y = "nn.softsign"(%x) : (tensor<100x72xf32>) -> tensor<100x72xf32>
  return %y : tensor<100x72xf32>
}
