// RUN: lamina-opt %s --split-input-file | lamina-opt --split-input-file | FileCheck %s

// '?' dims through the type rules of the ops that take them.

// CHECK-LABEL: func.func @mlp
// CHECK: "nn.matmul"(%{{.*}}, %{{.*}}) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
// CHECK: "nn.add"(%{{.*}}, %{{.*}}) : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
// CHECK: "nn.gelu"(%{{.*}}) : (tensor<?x512xf32>) -> tensor<?x512xf32>
func.func @mlp(%x: tensor<?x256xf32> {nn.dims = ["S"]}, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<?x512xf32> {
  %h = "nn.matmul"(%x, %w) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
  %hb = "nn.add"(%h, %b) : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g = "nn.gelu"(%hb) : (tensor<?x512xf32>) -> tensor<?x512xf32>
  return %g : tensor<?x512xf32>
}

// -----

// A static size wins over a '?' one (equal at run time); two '?' stay '?'.
// CHECK-LABEL: func.func @broadcasts
// CHECK: "nn.mul"{{.*}} -> tensor<8x4xf32>
// CHECK: "nn.sub"{{.*}} -> tensor<?x4xf32>
// CHECK: "nn.select"{{.*}} -> tensor<?x4xf32>
func.func @broadcasts(%a: tensor<?x4xf32>, %b: tensor<8x4xf32>, %c: tensor<?x1xf32>, %m: tensor<?x4xi1>) -> (tensor<8x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = "nn.mul"(%a, %b) : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "nn.sub"(%a, %c) : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
  %2 = "nn.select"(%m, %a, %1) : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @batched_matmul
// CHECK: "nn.matmul"{{.*}} -> tensor<?x12x?x?xf32>
func.func @batched_matmul(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x64x?xf32>) -> tensor<?x12x?x?xf32> {
  %0 = "nn.matmul"(%q, %k) : (tensor<?x12x?x64xf32>, tensor<?x12x64x?xf32>) -> tensor<?x12x?x?xf32>
  return %0 : tensor<?x12x?x?xf32>
}

// -----

// A reshape splitting `?x768` into `?x12x64` keeps the '?' dim; one
// merging `?x?x768` into `?x768` makes it their product.
// CHECK-LABEL: func.func @rows
// CHECK: "nn.layer_norm"{{.*}} -> tensor<?x?x768xf32>
// CHECK: "nn.softmax"{{.*}} -> tensor<?x?x768xf32>
// CHECK: "nn.reshape"{{.*}} -> tensor<?x?x12x64xf32>
// CHECK: "nn.transpose"{{.*}} -> tensor<?x12x?x64xf32>
// CHECK: "nn.reshape"{{.*}} -> tensor<?x768xf32>
// CHECK: "nn.reduce_max"{{.*}} -> tensor<?xf32>
// CHECK: "nn.cast"{{.*}} -> tensor<?xf16>
func.func @rows(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<?x12x?x64xf32>, tensor<?xf16>) {
  %0 = "nn.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %1 = "nn.softmax"(%0) {axis = -1 : i64} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %2 = "nn.reshape"(%1) : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
  %3 = "nn.transpose"(%2) {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x12x64xf32>) -> tensor<?x12x?x64xf32>
  %4 = "nn.reshape"(%1) : (tensor<?x?x768xf32>) -> tensor<?x768xf32>
  %5 = "nn.reduce_max"(%4) {axes = array<i64: 1>} : (tensor<?x768xf32>) -> tensor<?xf32>
  %6 = "nn.cast"(%5) : (tensor<?xf32>) -> tensor<?xf16>
  return %3, %6 : tensor<?x12x?x64xf32>, tensor<?xf16>
}
