// '?' dims through convert-nn-to-linalg: sizes read with tensor.dim, every
// tensor.empty sized from an operand, reshapes keeping or multiplying the
// '?' dims, and a cf.assert for each equality the type rules leave to run
// time.
// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @matmul_rows
// CHECK-SAME: (%[[X:.+]]: tensor<?x256xf32>, %[[W:.+]]: tensor<256x512xf32>)
// CHECK: %[[M:.+]] = tensor.dim %[[X]], %c0 : tensor<?x256xf32>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[M]]) : tensor<?x512xf32>
// CHECK: %[[ZERO:.+]] = linalg.fill {{.*}} outs(%[[INIT]] : tensor<?x512xf32>)
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<?x256xf32>, tensor<256x512xf32>) outs(%[[ZERO]] : tensor<?x512xf32>)
// CHECK-NOT: cf.assert
func.func @matmul_rows(%x: tensor<?x256xf32>, %w: tensor<256x512xf32>) -> tensor<?x512xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
  return %0 : tensor<?x512xf32>
}

// -----

// The contraction dims are checked where either is '?'.
// CHECK-LABEL: func.func @matmul_dynamic_k
// CHECK-DAG: %[[K1:.+]] = tensor.dim %arg0, %c1 : tensor<?x?xf32>
// CHECK-DAG: %[[K2:.+]] = tensor.dim %arg1, %c0 : tensor<?x64xf32>
// CHECK: %[[EQ:.+]] = arith.cmpi eq, %[[K1]], %[[K2]] : index
// CHECK: cf.assert %[[EQ]], "'nn.matmul' op at {{.*}}nn-to-linalg-dynamic.mlir:{{[0-9]+}}:8: the contraction dims of the operands (dim 1 of the left, dim 0 of the right) must be equal"
// CHECK: linalg.matmul
func.func @matmul_dynamic_k(%a: tensor<?x?xf32>, %b: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<?x?xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Two '?' operand dims of one loop must be equal; a '?' dim against a
// static one must be that size. A static 1 broadcasts (index 0).
// CHECK-LABEL: func.func @broadcasts
// CHECK-DAG: %[[A0:.+]] = tensor.dim %arg0, %c0 : tensor<?x4xf32>
// CHECK-DAG: %[[B0:.+]] = tensor.dim %arg1, %c0 : tensor<?x4xf32>
// CHECK: %[[EQ:.+]] = arith.cmpi eq, %[[B0]], %[[A0]] : index
// CHECK: cf.assert %[[EQ]], "'nn.add' op at {{.*}}: dim 0 of operand #1 must equal operand #0's dim 0 (loop 0)"
// CHECK: tensor.empty(%[[A0]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<?x4xf32>, tensor<1x4xf32>)
// CHECK: %[[EIGHT:.+]] = arith.cmpi eq, %[[A0]], %c8 : index
// CHECK: cf.assert %[[EIGHT]], "'nn.mul' op at {{.*}}: dim 0 of operand #0 must equal 8 (loop 0)"
// CHECK: return
func.func @broadcasts(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<1x4xf32>, %d: tensor<8x4xf32>) -> (tensor<?x4xf32>, tensor<8x4xf32>) {
  %0 = "nn.add"(%a, %b) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = "nn.sub"(%0, %c) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %2 = "nn.mul"(%a, %d) : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1, %2 : tensor<?x4xf32>, tensor<8x4xf32>
}

// -----

// A reshape splitting ?x768 into ?x12x64 keeps the '?' dim's size; one
// merging ?x?x768 into ?x768 collapses the two.
// CHECK-LABEL: func.func @reshapes
// CHECK: %[[M:.+]] = tensor.dim %arg0, %c0 : tensor<?x768xf32>
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%[[M]], 12, 64] : tensor<?x768xf32> into tensor<?x12x64xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0, 1], [2]] : tensor<?x?x768xf32> into tensor<?x768xf32>
func.func @reshapes(%x: tensor<?x768xf32>, %y: tensor<?x?x768xf32>) -> (tensor<?x12x64xf32>, tensor<?x768xf32>) {
  %0 = "nn.reshape"(%x) : (tensor<?x768xf32>) -> tensor<?x12x64xf32>
  %1 = "nn.reshape"(%y) : (tensor<?x?x768xf32>) -> tensor<?x768xf32>
  return %0, %1 : tensor<?x12x64xf32>, tensor<?x768xf32>
}

// -----

// Row ops keep '?' rows: the statistics are sized from them.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-DAG: %[[R:.+]] = tensor.dim %arg0, %c0 : tensor<?x?x64xf32>
// CHECK-DAG: %[[S:.+]] = tensor.dim %arg0, %c1 : tensor<?x?x64xf32>
// CHECK: tensor.empty(%[[R]], %[[S]]) : tensor<?x?xf32>
// CHECK: tensor.empty(%[[R]], %[[S]]) : tensor<?x?x64xf32>
// CHECK: linalg.transpose
// CHECK-NOT: cf.assert
// CHECK: return
func.func @softmax_rows(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %0 = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %1 = "nn.transpose"(%0) {perm = array<i64: 1, 0, 2>} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %1 : tensor<?x?x64xf32>
}

// -----

// A mean over a '?' dim divides by its size, read at run time.
// CHECK-LABEL: func.func @mean_of_dynamic_rows
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c1 : tensor<4x?xf32>
// CHECK: %[[I:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[F:.+]] = arith.uitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK: arith.divf %{{.+}}, %[[F]] : f32
func.func @mean_of_dynamic_rows(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %0 = "nn.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<4x?xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
