// convert-nn-to-hw has no kernel for i8 x i8 -> i32 matmuls (the cuda
// targets' matmul kernels take float operands): it leaves them, and without
// keep-unconverted says why at the op.
// RUN: lamina-opt %s --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s
// RUN: not lamina-opt %s --convert-nn-to-hw=chip=sm_80 2>&1 | FileCheck %s --check-prefix=ERROR

// CHECK-LABEL: func.func @matmul_i8
// CHECK: "nn.matmul"
// CHECK-NOT: "hw.launch"
// ERROR: nn-to-hw-integers.mlir:[[@LINE+3]]:8: error: 'nn.matmul' is not lowered to hw kernels: the matmul kernels of the cuda targets take float operands; these are i8
// ERROR-NOT: error:
func.func @matmul_i8(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) -> tensor<4x16xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<4x8xi8>, tensor<8x16xi8>) -> tensor<4x16xi32>
  return %c : tensor<4x16xi32>
}
