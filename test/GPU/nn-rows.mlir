// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 3 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/select-broadcast.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/leading-axes.mlir --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/long-rows.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/multi-output.mlir --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %S/Inputs/multi-output.mlir --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=MULTI
// RUN: lamina-run %S/Inputs/result-shapes.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/select-broadcast.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/leading-axes.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/long-rows.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// Row kernels (softmax, log_softmax, layer_norm, rms_norm, reductions over
// the last axis or the last two, or leading axes; rows longer than the
// registers hold, walked in chunks) and elementwise groups (broadcasting over
// dims of 1, casts between f32, f16 and bf16) in f32, f16 and bf16, of
// sizes no tile divides: emulated, each matches the nn program's NumPy
// reference; on the GPU, rows of 1000 f32 and 4096 bf16 are read and
// written in vectors, reductions are butterfly shuffles and, for blocks of
// several warps, a fold through shared memory between barriers, and ptxas
// accepts every kernel with no spills for sm_80 and sm_90a.

// EMULATED-NOT: mismatch
// EMULATED: check: all results match the reference

// MULTI-LABEL: func.func @main
// MULTI: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}) {{{.+}}kernel = @main_elementwise_0}
// MULTI: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {{{.+}}kernel = @main_reduction_0}
// MULTI-NOT: "hw.launch"

// PTX: .target sm_80
// PTX-LABEL: .entry main_reduction_0(
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX: ex2.approx
// PTX: st.global.v4.b32
// PTX-NOT: __nv_

// CONTRACT-NOT: BROKEN
// CONTRACT: main_{{.+}}: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: BROKEN

func.func @main(%x: tensor<5x1000xf32>, %h: tensor<3x4x77xf16>, %b: tensor<9x4096xbf16>, %g: tensor<4096xbf16>, %beta: tensor<4096xbf16>, %r: tensor<6x1x130xf16>, %w: tensor<130xf16>, %e: tensor<2x1x3x1xf32>, %f: tensor<1x5x1x7xf32>) -> (tensor<5x1000xf32>, tensor<3x4x77xf16>, tensor<9x4096xbf16>, tensor<6x1x130xf16>, tensor<5x1xf32>, tensor<3xf16>, tensor<3x4xf16>, tensor<2x5x3x7xbf16>) {
  %0 = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<5x1000xf32>) -> tensor<5x1000xf32>
  %1 = "nn.log_softmax"(%h) {axis = -1 : i64} : (tensor<3x4x77xf16>) -> tensor<3x4x77xf16>
  %2 = "nn.layer_norm"(%b, %g, %beta) {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<9x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<9x4096xbf16>
  %3 = "nn.rms_norm"(%r, %w) {axis = -1 : i64, epsilon = 1.0e-6 : f64} : (tensor<6x1x130xf16>, tensor<130xf16>) -> tensor<6x1x130xf16>
  %4 = "nn.reduce_max"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<5x1000xf32>) -> tensor<5x1xf32>
  %5 = "nn.reduce_sum"(%h) {axes = array<i64: 1, 2>} : (tensor<3x4x77xf16>) -> tensor<3xf16>
  %6 = "nn.reduce_mean"(%h) {axes = array<i64: -1>} : (tensor<3x4x77xf16>) -> tensor<3x4xf16>
  %7 = "nn.mul"(%e, %f) : (tensor<2x1x3x1xf32>, tensor<1x5x1x7xf32>) -> tensor<2x5x3x7xf32>
  %8 = "nn.tanh"(%7) : (tensor<2x5x3x7xf32>) -> tensor<2x5x3x7xf32>
  %9 = "nn.cast"(%8) : (tensor<2x5x3x7xf32>) -> tensor<2x5x3x7xf16>
  %10 = "nn.sigmoid"(%9) : (tensor<2x5x3x7xf16>) -> tensor<2x5x3x7xf16>
  %11 = "nn.cast"(%10) : (tensor<2x5x3x7xf16>) -> tensor<2x5x3x7xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %11 : tensor<5x1000xf32>, tensor<3x4x77xf16>, tensor<9x4096xbf16>, tensor<6x1x130xf16>, tensor<5x1xf32>, tensor<3xf16>, tensor<3x4xf16>, tensor<2x5x3x7xbf16>
}
