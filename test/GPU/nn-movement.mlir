// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 3 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-pooling.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-pooling.mlir --target=cuda:sm_90a --emulate --random --seed 5 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-booleans.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-booleans.mlir --target=cuda:sm_90a --emulate --random --seed 7 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-integers.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-integers.mlir --target=cuda:sm_90a --emulate --random --seed 9 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-transpose.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/movement-transpose.mlir --target=cuda:sm_90a --emulate --random --seed 11 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %S/Inputs/movement-booleans.mlir --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=BOOLEANS
// RUN: lamina-compile %S/Inputs/movement-transpose.mlir --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=TILED
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-pooling.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-pooling.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-booleans.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-integers.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-transpose.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/movement-transpose.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// Data movement on the GPU, emulated against the nn program's NumPy
// reference (integers and booleans exactly): transposes (any permutation),
// broadcasts, strided slices, pads, concatenations (with empty operands),
// gathers of table rows, iotas, prefix sums and argmaxes, reshapes as views,
// of f32, f16, bf16, i32 and i64, of sizes no tile divides, dims of 1 and an
// empty result; pooling, booleans across kernels and integer elementwise
// groups (Inputs/movement-*.mlir). ptxas accepts every kernel with no spills
// for sm_80 and sm_90a.

// EMULATED-NOT: mismatch
// EMULATED: check: all results match the reference

// Booleans are bytes in global memory: stored and loaded as bytes.
// BOOLEANS: .target sm_80
// BOOLEANS-LABEL: .entry main_compare_0(
// BOOLEANS: st.global.b8
// BOOLEANS-LABEL: .entry main_select_0(
// BOOLEANS: ld.global.b8

// A swap of the last two dims: the tile's rows read from global memory and
// written to shared memory, a barrier, the tile read across its rows, a
// barrier, the result's rows written.
// TILED: .target sm_90a
// TILED-LABEL: .entry main_transpose_0(
// TILED: ld.global.b32
// TILED: st.shared.b32
// TILED: bar.sync
// TILED: ld.shared.b32
// TILED: bar.sync
// TILED: st.global.b32

// CONTRACT-NOT: BROKEN
// CONTRACT: registers <= 255, no spills, no stack frame

func.func @main(%a: tensor<5x7x3xf32>, %h: tensor<33x17xf16>, %b: tensor<4x1x9xbf16>,
                %i: tensor<6x5xi32>, %l: tensor<3x4xi64>, %t: tensor<1000x8xf32>,
                %ids: tensor<2x5xi64>, %e: tensor<0x4xf32>)
    -> (tensor<3x5x7xf32>, tensor<17x33xf16>, tensor<2x4x3x9xbf16>, tensor<5x6xi32>,
        tensor<3x2xf16>, tensor<7x20xf16>, tensor<6x10xi32>, tensor<2x5x8xf32>,
        tensor<3x4xi64>, tensor<4x3xi64>, tensor<6x5xi32>, tensor<3xi64>, tensor<4x9x1xbf16>,
        tensor<5x4xf32>, tensor<6x4xi64>, tensor<7x3x5xf32>,
        tensor<4x0xf32>, tensor<1x5xf16>, tensor<4x2x9xbf16>, tensor<5x1xi32>) {
  %0 = "nn.transpose"(%a) {perm = array<i64: 2, 0, 1>} : (tensor<5x7x3xf32>) -> tensor<3x5x7xf32>
  %1 = "nn.transpose"(%h) {perm = array<i64: 1, 0>} : (tensor<33x17xf16>) -> tensor<17x33xf16>
  %2 = "nn.broadcast_to"(%b) : (tensor<4x1x9xbf16>) -> tensor<2x4x3x9xbf16>
  %3 = "nn.transpose"(%i) {perm = array<i64: 1, 0>} : (tensor<6x5xi32>) -> tensor<5x6xi32>
  %4 = "nn.slice"(%h) {starts = array<i64: 2, 1>, limits = array<i64: 9, 5>, strides = array<i64: 3, 2>} : (tensor<33x17xf16>) -> tensor<3x2xf16>
  %5 = "nn.pad"(%4) {low = array<i64: 1, 8>, high = array<i64: 3, 10>, value = -2.5 : f32} : (tensor<3x2xf16>) -> tensor<7x20xf16>
  %6 = "nn.concat"(%i, %i) {axis = 1 : i64} : (tensor<6x5xi32>, tensor<6x5xi32>) -> tensor<6x10xi32>
  %7 = "nn.gather"(%t, %ids) {axis = 0 : i64} : (tensor<1000x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  %8 = "nn.iota"() {axis = 1 : i64} : () -> tensor<3x4xi64>
  %9 = "nn.argmax"(%a) {axis = 1 : i64} : (tensor<5x7x3xf32>) -> tensor<5x3xi64>
  %r9 = "nn.reshape"(%9) : (tensor<5x3xi64>) -> tensor<15xi64>
  %s9 = "nn.slice"(%r9) {starts = array<i64: 0>, limits = array<i64: 12>} : (tensor<15xi64>) -> tensor<12xi64>
  %10 = "nn.reshape"(%s9) : (tensor<12xi64>) -> tensor<4x3xi64>
  %11 = "nn.cumsum"(%i) {axis = 0 : i64} : (tensor<6x5xi32>) -> tensor<6x5xi32>
  %12 = "nn.argmax"(%l) {axis = 1 : i64} : (tensor<3x4xi64>) -> tensor<3xi64>
  %13 = "nn.transpose"(%b) {perm = array<i64: 0, 2, 1>} : (tensor<4x1x9xbf16>) -> tensor<4x9x1xbf16>
  %a2 = "nn.slice"(%t) {starts = array<i64: 3, 2>, limits = array<i64: 8, 6>} : (tensor<1000x8xf32>) -> tensor<5x4xf32>
  %14 = "nn.concat"(%e, %a2, %e) {axis = 0 : i64} : (tensor<0x4xf32>, tensor<5x4xf32>, tensor<0x4xf32>) -> tensor<5x4xf32>
  %15 = "nn.concat"(%l, %l) {axis = 0 : i64} : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<6x4xi64>
  %at = "nn.transpose"(%a) {perm = array<i64: 1, 2, 0>} : (tensor<5x7x3xf32>) -> tensor<7x3x5xf32>
  %16 = "nn.cumsum"(%at) {axis = 2 : i64} : (tensor<7x3x5xf32>) -> tensor<7x3x5xf32>
  %17 = "nn.transpose"(%e) {perm = array<i64: 1, 0>} : (tensor<0x4xf32>) -> tensor<4x0xf32>
  %18 = "nn.iota"() {axis = 1 : i64} : () -> tensor<1x5xf16>
  %19 = "nn.concat"(%b, %b) {axis = 1 : i64} : (tensor<4x1x9xbf16>, tensor<4x1x9xbf16>) -> tensor<4x2x9xbf16>
  %i1 = "nn.slice"(%i) {starts = array<i64: 0, 4>, limits = array<i64: 5, 5>} : (tensor<6x5xi32>) -> tensor<5x1xi32>
  %20 = "nn.cumsum"(%i1) {axis = 1 : i64} : (tensor<5x1xi32>) -> tensor<5x1xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20 : tensor<3x5x7xf32>, tensor<17x33xf16>, tensor<2x4x3x9xbf16>, tensor<5x6xi32>, tensor<3x2xf16>, tensor<7x20xf16>, tensor<6x10xi32>, tensor<2x5x8xf32>, tensor<3x4xi64>, tensor<4x3xi64>, tensor<6x5xi32>, tensor<3xi64>, tensor<4x9x1xbf16>, tensor<5x4xf32>, tensor<6x4xi64>, tensor<7x3x5xf32>, tensor<4x0xf32>, tensor<1x5xf16>, tensor<4x2x9xbf16>, tensor<5x1xi32>
}
