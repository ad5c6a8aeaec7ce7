// RUN: lamina-compile %s --load-plugin=%S/../Extending/Inputs/softsign.py --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --load-plugin=%S/../Extending/Inputs/softsign.py --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --load-plugin=%S/../Extending/Inputs/softsign.py --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: %if ptxas %{ lamina-compile %s --load-plugin=%S/../Extending/Inputs/softsign.py --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --load-plugin=%S/../Extending/Inputs/softsign.py --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// A plugin's kernel (nn.softsign's, one 32x32 register tile per block) on
// a one-row tensor is launched on the buffers of the tensors, of their
// shapes (1 x 72, not collapsed); on a tensor with no elements the
// kernel the plugin built is erased and nothing is launched (a grid has
// no size 0): the result is a new empty buffer.

// HW-LABEL: func.func @main(
// HW: "hw.launch"(%{{.+}}, %{{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 3>, kernel = @main_softsign_0} : (memref<1x72xf32>, memref<1x72xf32>) -> ()
// HW-NOT: "hw.launch"
// HW: return
// HW: func.func private @main_softsign_0(%{{.+}}: memref<1x72xf32>, %{{.+}}: memref<1x72xf32>) attributes {hw.kernel}
// HW-NOT: @main_softsign_1

// EMULATED: check res0 (tensor<1x72xf32>): {{.*}}: ok
// EMULATED: check res1 (tensor<0x72xf32>): {{.*}}: ok
// EMULATED: check: all results match the reference

// CONTRACT: main_softsign_0: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: main_softsign_1

func.func @main(%x: tensor<1x72xf32>, %e: tensor<0x72xf32>) -> (tensor<1x72xf32>, tensor<0x72xf32>) {
  %y = "nn.softsign"(%x) : (tensor<1x72xf32>) -> tensor<1x72xf32>
  %z = "nn.softsign"(%e) : (tensor<0x72xf32>) -> tensor<0x72xf32>
  return %y, %z : tensor<1x72xf32>, tensor<0x72xf32>
}
