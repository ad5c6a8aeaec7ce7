// A user's op fuses like a built-in one: nn.hard_sigmoid, defined in a
// plugin as a UnaryElementwiseOp, joins a matmul's epilogue, and the fused
// program still matches the NumPy reference.
// RUN: lamina-opt %s --load-plugin=%S/../Tools/Inputs/hard-sigmoid-plugin.py --nn-fuse | FileCheck %s
// RUN: lamina-run %s --random --check -q --load-plugin=%S/../Tools/Inputs/hard-sigmoid-plugin.py | FileCheck %s --check-prefix=NUMERICS

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[Y:.+]] = "nn.fused"({{.*}}) {body = @[[BODY:.+]], kind = "contraction"}
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @[[BODY]]
// CHECK-NEXT: "nn.matmul"
// CHECK-NEXT: "nn.hard_sigmoid"
// CHECK-NEXT: "nn.mul"
// CHECK-NEXT: return

// NUMERICS: check: all results match the reference
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x5xf32>, %s: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = "nn.hard_sigmoid"(%0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %2 = "nn.mul"(%1, %s) : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %2 : tensor<4x5xf32>
}
