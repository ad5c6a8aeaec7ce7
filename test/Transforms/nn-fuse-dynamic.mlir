// nn-fuse forms the same groups on '?' dims as on static ones: a matmul
// with its bias and activation, and nothing across a reshape.
// RUN: lamina-opt %s --split-input-file --nn-fuse | FileCheck %s

// CHECK-LABEL: func.func @mlp
// CHECK: %[[G:.+]] = "nn.fused"(%arg0, %arg1, %arg2) {body = @[[BODY:.+]], kind = "contraction"} : (tensor<?x256xf32>, tensor<256x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
// CHECK: "nn.matmul"(%[[G]], %arg3) : (tensor<?x512xf32>, tensor<512x256xf32>) -> tensor<?x256xf32>
// CHECK: func.func private @[[BODY]](%{{.+}}: tensor<?x256xf32>, %{{.+}}: tensor<256x512xf32>, %{{.+}}: tensor<512xf32>) -> tensor<?x512xf32>
// CHECK: "nn.matmul"
// CHECK: "nn.add"
// CHECK: "nn.gelu"
func.func @mlp(%x: tensor<?x256xf32>, %w1: tensor<256x512xf32>, %b1: tensor<512xf32>, %w2: tensor<512x256xf32>) -> tensor<?x256xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g = "nn.gelu"(%hb) : (tensor<?x512xf32>) -> tensor<?x512xf32>
  %y = "nn.matmul"(%g, %w2) : (tensor<?x512xf32>, tensor<512x256xf32>) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

// CHECK-LABEL: func.func @no_fusion_across_reshape
// CHECK-NOT: "nn.fused"
// CHECK: "nn.softmax"
// CHECK: "nn.reshape"
// CHECK: "nn.transpose"
func.func @no_fusion_across_reshape(%x: tensor<?x?x768xf32>) -> tensor<?x12x?x64xf32> {
  %s = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %r = "nn.reshape"(%s) : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
  %t = "nn.transpose"(%r) {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x12x64xf32>) -> tensor<?x12x?x64xf32>
  return %t : tensor<?x12x?x64xf32>
}
