// A matmul with a '?' row count (batch x tokens) keeps the packed
// contraction's register tile: the loop over its rows is peeled, its full
// tiles are the static 8-row register tile (outer products in registers),
// and the tail runs one row at a time, vectorised as well; the epilogue
// runs one row at a time, as for static rows.
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=tiled | FileCheck %s
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// CHECK-LABEL: func.func @mlp_rows
// CHECK: %[[ROWS:.+]] = tensor.dim {{.*}}%arg0, %{{.+}} : tensor<?x256xf32>
// CHECK: %[[FULL:.+]] = affine.apply #{{.+}}()[%[[ROWS]]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[FULL]] step %c8
// CHECK: vector.contract {{.*}} : vector<8x1xf32>, vector<1x1x32xf32> into vector<8x1x32xf32>
// CHECK: scf.for %{{.+}} = %[[FULL]] to %[[ROWS]] step %c8
// CHECK: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x32xf32> into vector<1x1x32xf32>
// CHECK: math.erf {{.*}} : vector<1x64xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @mlp_rows(%x: tensor<?x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<?x512xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
  %1 = "nn.add"(%0, %b) : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %2 = "nn.gelu"(%1) : (tensor<?x512xf32>) -> tensor<?x512xf32>
  return %2 : tensor<?x512xf32>
}
