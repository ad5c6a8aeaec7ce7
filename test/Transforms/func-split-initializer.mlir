// RUN: lamina-opt %s --split-input-file --func-split-initializer | FileCheck %s

// A bound weight transposed before a matmul: the transpose runs in the
// initialiser, the function takes its result.
// CHECK-LABEL: func.func @main_init
// CHECK-SAME: (%[[W:.+]]: tensor<4x3xf32> {lamina.bound, lamina.parameter = "fc.weight"}) -> tensor<3x4xf32>
// CHECK: %[[T:.+]] = "nn.transpose"(%[[W]])
// CHECK: return %[[T]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[P:.+]]: tensor<3x4xf32> {lamina.prepared})
// CHECK-SAME: lamina.initializer = @main_init
// CHECK-NOT: "nn.transpose"
// CHECK: "nn.matmul"(%[[X]], %[[P]])
func.func @main(%w: tensor<4x3xf32> {lamina.bound, lamina.parameter = "fc.weight"},
                %x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %y = "nn.matmul"(%x, %t) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A batch norm's scale from bound statistics and a constant: computed in
// the initialiser (the constant copied there); a bound bias used as it is
// is passed through.
// CHECK-LABEL: func.func @main_init
// CHECK-SAME: (%[[VAR:.+]]: tensor<2xf32> {lamina.bound}, %[[B:.+]]: tensor<2xf32> {lamina.bound})
// CHECK: %[[EPS:.+]] = arith.constant
// CHECK: %[[S:.+]] = "nn.add"(%[[VAR]], %[[EPS]])
// CHECK: %[[R:.+]] = "nn.rsqrt"(%[[S]])
// CHECK: return %[[B]], %[[R]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.+]]: tensor<3x2xf32>, %[[PB:.+]]: tensor<2xf32> {lamina.prepared}, %[[PR:.+]]: tensor<2xf32> {lamina.prepared})
// CHECK: %[[M:.+]] = "nn.mul"(%[[X]], %[[PR]])
// CHECK: "nn.add"(%[[M]], %[[PB]])
func.func @main(%var: tensor<2xf32> {lamina.bound}, %x: tensor<3x2xf32>,
                %b: tensor<2xf32> {lamina.bound}) -> tensor<3x2xf32> {
  %eps = arith.constant dense<1.0e-05> : tensor<f32>
  %0 = "nn.add"(%var, %eps) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = "nn.rsqrt"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "nn.mul"(%x, %1) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %3 = "nn.add"(%2, %b) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %3 : tensor<3x2xf32>
}

// -----

// The second run, on linalg: a transpose of a prepared weight joins the
// initialiser, which now returns the transposed weight instead, out of its
// fusion group; a fill of a constant stays in the function.
// CHECK-LABEL: func.func @f_init
// CHECK-SAME: (%[[W:.+]]: tensor<4x3xf32> {lamina.bound}) -> tensor<3x4xf32>
// CHECK-NOT: lamina.fusion_group
// CHECK: %[[N:.+]] = "nn.neg"(%[[W]])
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[N]] : tensor<4x3xf32>) outs(%[[E]] : tensor<3x4xf32>) permutation = [1, 0]{{ *$}}
// CHECK: return %[[T]]
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[P:.+]]: tensor<3x4xf32> {lamina.prepared})
// CHECK-NOT: linalg.transpose
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%[[X]], %[[P]]
func.func @f_init(%w: tensor<4x3xf32> {lamina.bound}) -> tensor<4x3xf32> {
  %0 = "nn.neg"(%w) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @f(%x: tensor<2x3xf32>, %p: tensor<4x3xf32> {lamina.prepared}) -> tensor<2x4xf32>
    attributes {lamina.initializer = @f_init} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} : tensor<3x4xf32>
  %t = linalg.transpose ins(%p : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0] {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"}
  %e2 = tensor.empty() : tensor<2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %t : tensor<2x3xf32>, tensor<3x4xf32>) outs(%fill : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// No bound argument: nothing changes.
// CHECK-LABEL: func.func @unbound
// CHECK-NOT: lamina.initializer
// CHECK: "nn.transpose"
// CHECK-NOT: func.func @unbound_init
func.func @unbound(%w: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}

// -----

// An op using a bound argument and an unbound one stays.
// CHECK-LABEL: func.func @main_init
// CHECK: return %{{.+}} : tensor<2xf32>
// CHECK-LABEL: func.func @main
// CHECK: "nn.add"
func.func @main(%w: tensor<2xf32> {lamina.bound}, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "nn.add"(%w, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A broadcast of a bound bias (larger than the bias) stays in the function.
// CHECK-LABEL: func.func @main_init
// CHECK-NOT: "nn.broadcast_to"
// CHECK-LABEL: func.func @main
// CHECK: "nn.broadcast_to"
func.func @main(%b: tensor<2xf32> {lamina.bound}, %x: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %0 = "nn.broadcast_to"(%b) : (tensor<2xf32>) -> tensor<8x2xf32>
  %1 = "nn.add"(%0, %x) : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %1 : tensor<8x2xf32>
}

// -----

// The third run, on a schedule's loops: a packing loop on tensors over a
// prepared weight (its padding value a ub.poison) joins the initialiser.
// CHECK-LABEL: func.func @g_init
// CHECK-SAME: -> tensor<2x4xf32>
// CHECK: ub.poison
// CHECK: scf.forall
// CHECK: vector.transfer_read
// CHECK: return
// CHECK-LABEL: func.func @g
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf32>, %[[P:.+]]: tensor<2x4xf32> {lamina.prepared})
// CHECK-NOT: scf.forall
// CHECK: "nn.add"(%[[X]], %[[P]])
func.func @g_init(%w: tensor<2x4xf32> {lamina.bound}) -> tensor<2x4xf32> {
  return %w : tensor<2x4xf32>
}
func.func @g(%x: tensor<2x4xf32>, %p: tensor<2x4xf32> {lamina.prepared}) -> tensor<2x4xf32>
    attributes {lamina.initializer = @g_init} {
  %poison = ub.poison : f32
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<2x4xf32>
  %packed = scf.forall (%i) in (2) shared_outs(%out = %e) -> (tensor<2x4xf32>) {
    %row = tensor.extract_slice %p[%i, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
    %v = vector.transfer_read %row[%c0, %c0], %poison {in_bounds = [true, true]} : tensor<1x4xf32>, vector<1x4xf32>
    %dest = tensor.extract_slice %out[%i, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<1x4xf32>
    %w = vector.transfer_write %v, %dest[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, tensor<1x4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %w into %out[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x4xf32>
    }
  }
  %y = "nn.add"(%x, %packed) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
