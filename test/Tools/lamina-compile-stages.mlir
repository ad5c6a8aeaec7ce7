// lamina-compile stops after any stage of the CPU pipeline.
// RUN: lamina-compile %s --emit=nn | FileCheck %s --check-prefix=NN
// RUN: lamina-compile %s --emit=fused | FileCheck %s --check-prefix=FUSED
// RUN: lamina-compile %s --emit=linalg | FileCheck %s --check-prefix=LINALG
// RUN: lamina-compile %s --emit=bufferized | FileCheck %s --check-prefix=BUFFERIZED
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f --emit=schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f --emit=loops | FileCheck %s --check-prefix=LOOPS
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f --emit=llvm-mlir | FileCheck %s --check-prefix=LLVM-MLIR
// RUN: lamina-compile %s --target=cpu --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: lamina-compile %s --emit=asm | FileCheck %s --check-prefix=ASM
// RUN: lamina-compile %s --emit=obj -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJ
// The default stage is the last one.
// RUN: lamina-compile %s -o %t.default.o
// RUN: cmp %t.o %t.default.o
// Input from stdin.
// RUN: cat %s | lamina-compile - --emit=linalg | FileCheck %s --check-prefix=LINALG
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// NN-LABEL: func.func @main
// NN: "nn.matmul"
// NN: "nn.add"
// NN: "nn.relu"

// FUSED-LABEL: func.func @main
// FUSED: "nn.fused"({{.*}}) {body = @[[BODY:.+]], kind = "contraction"}
// FUSED: func.func private @[[BODY]]
// FUSED: "nn.matmul"
// FUSED: "nn.add"
// FUSED: "nn.relu"

// LINALG-LABEL: func.func @main
// LINALG-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16xf32>) -> tensor<4x16xf32>
// LINALG: %[[ACC:.+]] = linalg.fill
// LINALG: %[[MM:.+]] = linalg.matmul {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : tensor<4x16xf32>)
// LINALG: linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<4x16xf32>, tensor<16xf32>)
// LINALG: arith.addf
// LINALG: arith.maximumf
// LINALG-NOT: "nn.

// The schedule: the matmul tagged for its schedule (4 rows, fewer than a
// register tile's 8: a matrix-vector product, B read in place), and the
// script.
// SCHEDULE-LABEL: func.func @main
// SCHEDULE: linalg.matmul {{{.*}}lamina.schedule = "[[MM:main_fusion_0/[0-9]+]]"
// SCHEDULE: module @lamina_schedule attributes {transform.with_named_sequence}
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0_contraction
// SCHEDULE: transform.structured.match attributes {lamina.schedule = "[[MM]]"}
// SCHEDULE-NOT: transform.structured.pack
// SCHEDULE: transform.structured.vectorize
// SCHEDULE: transform.named_sequence @__transform_main
// SCHEDULE: transform.include @schedule_main_fusion_0_contraction failures(suppress)

// Tiled: vector ops on tensors; no linalg op and no script is left.
// TILED-LABEL: func.func @main
// TILED: vector.contract {{.*}} : vector<4x8xf32>, vector<8x16xf32> into vector<4x16xf32>
// TILED: arith.maximumf {{.*}} : vector<1x16xf32>
// TILED-NOT: linalg.matmul
// TILED-NOT: transform.
// TILED-NOT: lamina.schedule

// Results are out-parameters.
// BUFFERIZED-LABEL: func.func @main
// BUFFERIZED-SAME: (%{{.+}}: memref<4x8xf32>, %{{.+}}: memref<8x16xf32>, %{{.+}}: memref<16xf32>, %[[OUT:.+]]: memref<4x16xf32>) {
// BUFFERIZED: vector.contract
// BUFFERIZED: vector.transfer_write {{.*}}, %{{.+}}[
// BUFFERIZED-NOT: tensor<

// The register tile: FMAs of a broadcast row element and a column vector.
// LOOPS-LABEL: func.func @main
// LOOPS: scf.for
// LOOPS: vector.fma {{.*}} : vector<16xf32>
// LOOPS-NOT: linalg.
// LOOPS-NOT: vector.contract

// LLVM-MLIR: llvm.func internal @main(
// LLVM-MLIR: llvm.func @_mlir_ciface_main(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// LLVM-MLIR-NOT: func.func
// LLVM-MLIR-NOT: memref.

// LLVM: target triple = "x86_64
// LLVM: define void @_mlir_ciface_main(ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}})
// LLVM-NOT: define void @main(

// ASM: .globl _mlir_ciface_main
// ASM: _mlir_ciface_main:

// OBJ: T _mlir_ciface_main
// OBJ-NOT: T main

func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.add"(%0, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "nn.relu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
