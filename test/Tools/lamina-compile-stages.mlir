// lamina-compile stops after any stage of the CPU pipeline.
// RUN: lamina-compile %s --emit=nn | FileCheck %s --check-prefix=NN
// RUN: lamina-compile %s --emit=fused | FileCheck %s --check-prefix=FUSED
// RUN: lamina-compile %s --emit=linalg | FileCheck %s --check-prefix=LINALG
// RUN: lamina-compile %s --emit=bufferized | FileCheck %s --check-prefix=BUFFERIZED
// RUN: lamina-compile %s --emit=vector | FileCheck %s --check-prefix=VECTOR
// RUN: lamina-compile %s --emit=loops | FileCheck %s --check-prefix=LOOPS
// RUN: lamina-compile %s --emit=llvm-mlir | FileCheck %s --check-prefix=LLVM-MLIR
// RUN: lamina-compile %s --target=cpu --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: lamina-compile %s --emit=asm | FileCheck %s --check-prefix=ASM
// RUN: lamina-compile %s --emit=obj -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJ
// The default stage is the last one.
// RUN: lamina-compile %s -o %t.default.o
// RUN: cmp %t.o %t.default.o
// Input from stdin.
// RUN: cat %s | lamina-compile - --emit=linalg | FileCheck %s --check-prefix=LINALG

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

// Results are out-parameters; no buffer is allocated for them.
// BUFFERIZED-LABEL: func.func @main
// BUFFERIZED-SAME: (%{{.+}}: memref<4x8xf32>, %{{.+}}: memref<8x16xf32>, %{{.+}}: memref<16xf32>, %[[OUT:.+]]: memref<4x16xf32>) {
// BUFFERIZED-NOT: memref.alloc
// BUFFERIZED: linalg.matmul {{.*}} outs(%[[OUT]] : memref<4x16xf32>)
// BUFFERIZED-NOT: tensor<

// The matmul and the bias+relu work on rows of 16: one vector per row.
// VECTOR-LABEL: func.func @main
// VECTOR: scf.for
// VECTOR: vector.transfer_read {{.*}} vector<1x16x1xf32>
// VECTOR: arith.mulf {{.*}} : vector<1x16x1xf32>
// VECTOR: vector.transfer_write {{.*}} : vector<1x16xf32>
// VECTOR: arith.maximumf {{.*}} : vector<1x16xf32>
// VECTOR-NOT: linalg.

// LOOPS-LABEL: func.func @main
// LOOPS: scf.for
// LOOPS: vector.{{load|transfer_read}}
// LOOPS: arith.mulf
// LOOPS-NOT: linalg.

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
