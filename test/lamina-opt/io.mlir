// Input from a file, from stdin (`-`, or no input argument), output to
// stdout or to `-o FILE`.
// RUN: lamina-opt %s | FileCheck %s
// RUN: lamina-opt < %s | FileCheck %s
// RUN: cat %s | lamina-opt - | FileCheck %s
// RUN: rm -f %t.out.mlir
// RUN: lamina-opt %s -o %t.out.mlir | count 0
// RUN: FileCheck %s < %t.out.mlir
// RUN: cat %s | lamina-opt - -o - | FileCheck %s
// RUN: cat %s | lamina-opt -o %t.stdin.mlir -
// RUN: FileCheck %s < %t.stdin.mlir
// The output parses again and prints the same.
// RUN: lamina-opt %s | lamina-opt | diff - %t.out.mlir
// RUN: lamina-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: lamina-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG -DFILE=%s
// RUN: cat %s | lamina-opt --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUG -DFILE="<stdin>"

// CHECK: module {
// CHECK-LABEL: func.func @scaled_relu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.+]] = "nn.mul"(%[[X]], %[[C]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.+]] = "nn.relu"(%[[M]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[R]] : tensor<4xf32>

// GENERIC: "builtin.module"() ({
// GENERIC: "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "scaled_relu"}> ({
// GENERIC: "arith.constant"() <{value = dense<2.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
// GENERIC: "nn.relu"
// GENERIC: "func.return"

// Locations point into the input: the op on line 38, column 8.
// DEBUG: "nn.relu"(%{{.+}}) : (tensor<4xf32>) -> tensor<4xf32> loc(#[[RELU:loc[0-9]+]])
// DEBUG: #[[RELU]] = loc("[[FILE]]":38:8)
func.func @scaled_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %0 = "nn.mul"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
