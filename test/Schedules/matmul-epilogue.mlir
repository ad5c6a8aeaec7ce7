// A matmul with a bias, relu and residual add, through the CPU pipeline:
// the epilogue runs inside the packed matmul's thread loop, on each block
// of its result, one unpacked vector at a time; no copy of the whole
// result and no second loop over it. Where the blocks would not divide
// the result, the epilogue keeps a thread loop of its own.
// RUN: lamina-compile %s --target=cpu:znver5,+avx512f,threads=2 --emit=tiled | FileCheck %s
// (The scheduled IR is checked for an AVX-512 CPU, znver5, on any host.)

// CHECK-LABEL: func.func @bias_relu_residual
// CHECK: scf.forall (%{{.+}}) in (2) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<64x256xf32>)
// CHECK: vector.contract
// CHECK: vector.transfer_read {{.*}} : tensor<1x2x32xf32>, vector<1x2x32xf32>
// CHECK-NEXT: vector.shape_cast {{.*}} : vector<1x2x32xf32> to vector<1x64xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x64xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @bias_relu_residual(%x: tensor<64x48xf32>, %w: tensor<48x256xf32>, %b: tensor<256xf32>,
                              %r: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<64x48xf32>, tensor<48x256xf32>) -> tensor<64x256xf32>
  %1 = "nn.add"(%0, %b) : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %2 = "nn.relu"(%1) : (tensor<64x256xf32>) -> tensor<64x256xf32>
  %3 = "nn.add"(%2, %r) : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32>
  return %3 : tensor<64x256xf32>
}

// CHECK-LABEL: func.func @columns_blocks_do_not_divide
// CHECK: vector.contract
// CHECK: scf.forall.in_parallel
// CHECK: linalg.copy
// CHECK: scf.forall
// CHECK: arith.maximumf
func.func @columns_blocks_do_not_divide(%x: tensor<24x8xf32>, %w: tensor<8x40xf32>, %b: tensor<40xf32>)
    -> tensor<24x40xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<24x8xf32>, tensor<8x40xf32>) -> tensor<24x40xf32>
  %1 = "nn.add"(%0, %b) : (tensor<24x40xf32>, tensor<40xf32>) -> tensor<24x40xf32>
  %2 = "nn.relu"(%1) : (tensor<24x40xf32>) -> tensor<24x40xf32>
  return %2 : tensor<24x40xf32>
}
