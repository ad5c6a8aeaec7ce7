// RUN: lamina-opt %s | lamina-opt | FileCheck %s
// RUN: lamina-opt %s --mlir-print-op-generic | lamina-opt | FileCheck %s

// Every hw op prints and parses back unchanged: a kernel with its launch,
// tiles in shared memory and registers, sync and async copies, TMA loads on
// mbarriers, tensor-core MMA, register-tile arithmetic, a pipelined loop and
// a store with an epilogue.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:[^:]+]]: memref<256x64xf16>, %[[B:[^:]+]]: memref<64x512xf16>, %[[C:[^:]+]]: memref<256x512xf32>)
// CHECK: "hw.launch"(%[[A]], %[[B]], %[[C]]) {block = array<i64: 128>, grid = array<i64: 2, 4>, kernel = @matmul} : (memref<256x64xf16>, memref<64x512xf16>, memref<256x512xf32>) -> ()
func.func @main(%a: memref<256x64xf16>, %b: memref<64x512xf16>, %c: memref<256x512xf32>) {
  "hw.launch"(%a, %b, %c) {kernel = @matmul, grid = array<i64: 2, 4>, block = array<i64: 128>} : (memref<256x64xf16>, memref<64x512xf16>, memref<256x512xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: attributes {hw.kernel}
// CHECK: %[[BX:.+]] = "hw.block_id"() {dim = 0 : i64} : () -> index
// CHECK: %[[BY:.+]] = "hw.block_id"() {dim = 1 : i64} : () -> index
// CHECK: %[[AS:.+]] = "hw.alloc"() : () -> memref<2x128x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.+]] = "hw.alloc"() : () -> memref<2x32x128xf16, #gpu.address_space<workgroup>>
// CHECK: %[[ACC:.+]] = "hw.alloc"() : () -> memref<128x128xf32, #gpu.address_space<private>>
// CHECK: "hw.fill"(%[[ACC]]) : (memref<128x128xf32, #gpu.address_space<private>>) -> ()
// CHECK: scf.for %[[K:.+]] = 
// CHECK-NEXT: "hw.pipeline"() {stages = 2 : i64} : () -> ()
// CHECK: %[[TA:.+]] = "hw.async_copy"(%{{.+}}, %[[AS]], %{{.+}}, %[[K]], %{{.+}}) : (memref<256x64xf16>, memref<2x128x32xf16, #gpu.address_space<workgroup>>, index, index, index) -> !hw.token
// CHECK: %[[TB:.+]] = "hw.async_copy"
// CHECK: "hw.commit"(%[[TA]], %[[TB]]) : (!hw.token, !hw.token) -> ()
// CHECK: "hw.wait"() {pending = 0 : i64} : () -> ()
// CHECK: "hw.mma"(%[[AS]], %[[BS]], %[[ACC]], %{{.+}}, %{{.+}}) : (memref<2x128x32xf16, #gpu.address_space<workgroup>>, memref<2x32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #gpu.address_space<private>>, index, index) -> ()
// CHECK: "hw.barrier"() : () -> ()
// CHECK: "hw.relu"(%[[ACC]], %[[ACC]])
// CHECK: "hw.store"(%[[ACC]], %{{.+}}, %{{.+}}, %{{.+}}) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<128x128xf32, #gpu.address_space<private>>, memref<256x512xf32>, index, index) -> ()
func.func @matmul(%a: memref<256x64xf16>, %b: memref<64x512xf16>, %c: memref<256x512xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %a_s = "hw.alloc"() : () -> memref<2x128x32xf16, #gpu.address_space<workgroup>>
  %b_s = "hw.alloc"() : () -> memref<2x32x128xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<128x128xf32, #gpu.address_space<private>>
  "hw.fill"(%acc) : (memref<128x128xf32, #gpu.address_space<private>>) -> ()
  %row = arith.muli %bx, %c128 : index
  %col = arith.muli %by, %c128 : index
  scf.for %k = %c0 to %c64 step %c32 {
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    %kk = arith.divui %k, %c32 : index
    %s = arith.remui %kk, %c2 : index
    %ta = "hw.async_copy"(%a, %a_s, %row, %k, %s) : (memref<256x64xf16>, memref<2x128x32xf16, #gpu.address_space<workgroup>>, index, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %b_s, %k, %col, %s) : (memref<64x512xf16>, memref<2x32x128xf16, #gpu.address_space<workgroup>>, index, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
    "hw.mma"(%a_s, %b_s, %acc, %s, %s) : (memref<2x128x32xf16, #gpu.address_space<workgroup>>, memref<2x32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #gpu.address_space<private>>, index, index) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.relu"(%acc, %acc) : (memref<128x128xf32, #gpu.address_space<private>>, memref<128x128xf32, #gpu.address_space<private>>) -> ()
  "hw.store"(%acc, %c, %row, %col) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<128x128xf32, #gpu.address_space<private>>, memref<256x512xf32>, index, index) -> ()
  return
}

// CHECK-LABEL: func.func @tma
// CHECK: %[[BAR:.+]] = "hw.mbarrier_init"() {barriers = 2 : i64, count = 1 : i64} : () -> !hw.mbarrier
// CHECK: "hw.tma_load"(%{{.+}}, %{{.+}}, %[[BAR]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (memref<256x64xf16>, memref<2x128x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index, index) -> ()
// CHECK: "hw.mbarrier_arrive"(%[[BAR]], %{{.+}}) : (!hw.mbarrier, index) -> ()
// CHECK: "hw.mbarrier_wait"(%[[BAR]], %{{.+}}, %{{.+}}) : (!hw.mbarrier, index, index) -> ()
func.func @tma(%a: memref<256x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bar = "hw.mbarrier_init"() {count = 1 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %a_s = "hw.alloc"() : () -> memref<2x128x64xf16, #gpu.address_space<workgroup>>
  "hw.tma_load"(%a, %a_s, %bar, %c0, %c0, %c0, %c0) : (memref<256x64xf16>, memref<2x128x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index, index) -> ()
  "hw.mbarrier_arrive"(%bar, %c1) : (!hw.mbarrier, index) -> ()
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  return
}

// CHECK-LABEL: func.func @register_tiles
// CHECK: "hw.copy"(%{{.+}}, %[[X:.+]], %{{.+}}, %{{.+}}) : (memref<100x70xf32>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
// CHECK: "hw.reduce_max"(%[[X]], %[[M:.+]]) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
// CHECK: "hw.sub"(%[[X]], %[[M]], %[[X]])
// CHECK: "hw.exp"(%[[X]], %[[X]])
// CHECK: "hw.reduce_sum"(%[[X]], %[[M]])
// CHECK: "hw.max"(%[[M]], %[[M]], %[[M]])
// CHECK: "hw.mul"(%[[X]], %[[R:.+]], %[[X]])
// CHECK: "hw.add"(%[[X]], %[[R]], %[[X]])
// CHECK: "hw.neg"(%[[X]], %[[X]])
// CHECK: "hw.gelu"(%[[X]], %[[X]])
// CHECK: "hw.elementwise"(%[[X]], %[[R]], %[[X]]) {fn = "nn.pow"}
// CHECK: "hw.elementwise"(%[[X]], %[[X]]) {approximate = "tanh", fn = "nn.gelu"}
// CHECK: "hw.fill"(%[[R]]) {value = 2.500000e-01 : f64}
// CHECK: "hw.cast"(%[[X]], %[[H:.+]]) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf16, #gpu.address_space<private>>) -> ()
// CHECK: "hw.store"(%[[H]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {epilogue = @scale, operandSegmentSizes = array<i32: 1, 1, 1, 2>}
func.func @register_tiles(%x: memref<100x70xf32>, %y: memref<100x70xf16>, %bias: memref<70xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %xr = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<64x1xf32, #gpu.address_space<private>>
  %r = "hw.alloc"() : () -> memref<1x64xf32, #gpu.address_space<private>>
  %h = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  "hw.copy"(%x, %xr, %c0, %c0) : (memref<100x70xf32>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  "hw.reduce_max"(%xr, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  "hw.sub"(%xr, %m, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.exp"(%xr, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.reduce_sum"(%xr, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  "hw.max"(%m, %m, %m) : (memref<64x1xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  "hw.mul"(%xr, %r, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.add"(%xr, %r, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.neg"(%xr, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.gelu"(%xr, %xr) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.elementwise"(%xr, %r, %xr) {fn = "nn.pow"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.elementwise"(%xr, %xr) {fn = "nn.gelu", approximate = "tanh"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.fill"(%r) {value = 0.25 : f64} : (memref<1x64xf32, #gpu.address_space<private>>) -> ()
  "hw.cast"(%xr, %h) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf16, #gpu.address_space<private>>) -> ()
  "hw.store"(%h, %y, %bias, %c0, %c0) {epilogue = @scale, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<64x64xf16, #gpu.address_space<private>>, memref<100x70xf16>, memref<70xf16>, index, index) -> ()
  return
}

// CHECK-LABEL: func.func private @scale
func.func private @scale(%acc: f32, %bias: f16) -> f16 {
  %b = arith.extf %bias : f16 to f32
  %s = arith.mulf %acc, %b : f32
  %r = arith.truncf %s : f32 to f16
  return %r : f16
}

// Data movement: gathers through an index map (with a table's indices and
// a padding value), coordinates, folds along an axis, a store into a box.
// CHECK-LABEL: func.func @movement
// CHECK: "hw.gather_elements"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {axis = 0 : i64, count = 256 : i64, dims = array<i64: 0, 1>, shape = array<i64: 2, 8>}
// CHECK: "hw.gather_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 256 : i64, dims = array<i64: 0, 1>, shape = array<i64: 4, 9>, starts = array<i64: 0, -1>, strides = array<i64: 1, 1>, value = -1.000000e+00 : f64}
// CHECK: "hw.index_elements"(%{{.+}}, %{{.+}}) {axis = 1 : i64, count = 256 : i64, shape = array<i64: 2, 8>}
// CHECK: "hw.fold_axis"(%{{.+}}, %{{.+}}, %{{.+}}) {axis = 1 : i64, count = 4 : i64, kind = "argmax", shape = array<i64: 4>}
// CHECK: "hw.fold_axis"(%{{.+}}, %{{.+}}, %{{.+}}) {axis = 0 : i64, count = 256 : i64, kind = "prefix_sum", shape = array<i64: 4, 8>}
// CHECK: "hw.store_elements"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {count = 256 : i64, shape = array<i64: 2, 8>}
func.func @movement(%x: memref<4x8xf32>, %ids: memref<2xi64>, %y: memref<5x9xf32>, %i: memref<4x8xi64>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %n = "hw.alloc"() : () -> memref<256xi64, #gpu.address_space<private>>
  %o = arith.constant 0 : index
  "hw.gather_elements"(%x, %t, %o, %ids) {shape = array<i64: 2, 8>, count = 256 : i64, dims = array<i64: 0, 1>, axis = 0 : i64} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index, memref<2xi64>) -> ()
  "hw.gather_elements"(%x, %t, %o) {shape = array<i64: 4, 9>, count = 256 : i64, dims = array<i64: 0, 1>, starts = array<i64: 0, -1>, strides = array<i64: 1, 1>, value = -1.0 : f64} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  "hw.index_elements"(%n, %o) {shape = array<i64: 2, 8>, count = 256 : i64, axis = 1 : i64} : (memref<256xi64, #gpu.address_space<private>>, index) -> ()
  "hw.fold_axis"(%x, %n, %o) {shape = array<i64: 4>, count = 4 : i64, axis = 1 : i64, kind = "argmax"} : (memref<4x8xf32>, memref<256xi64, #gpu.address_space<private>>, index) -> ()
  "hw.fold_axis"(%i, %n, %o) {shape = array<i64: 4, 8>, count = 256 : i64, axis = 0 : i64, kind = "prefix_sum"} : (memref<4x8xi64>, memref<256xi64, #gpu.address_space<private>>, index) -> ()
  "hw.store_elements"(%t, %y, %o, %o, %o) {shape = array<i64: 2, 8>, count = 256 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<5x9xf32>, index, index, index) -> ()
  return
}

// An f32 MMA accurate to f32 (3xTF32) with B stored transposed (N x K).
// CHECK-LABEL: func.func private @split_transposed
// CHECK: "hw.mma"(%{{.+}}, %{{.+}}, %{{.+}}) {precision = "3xtf32", transpose_b = true} : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
// CHECK: "hw.mma"(%{{.+}}, %{{.+}}, %{{.+}}) {precision = "tf32_rounded", transpose_a = true} : (memref<32x64xf32, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
func.func private @split_transposed() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %at = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %acc) {precision = "3xtf32", transpose_b = true} : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.mma"(%at, %at, %acc) {precision = "tf32_rounded", transpose_a = true} : (memref<32x64xf32, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// The convolution ops: a direct kernel's window sums (with a bias, groups)
// and an implicit GEMM's im2col gather.
// CHECK-LABEL: func.func private @convolutions
// CHECK: "hw.conv_elements"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {count = 144 : i64, dilations = array<i64: 2, 1>, groups = 3 : i64, padding = array<i64: 1, 0>, shape = array<i64: 1, 6, 6, 6>}
// CHECK: "hw.im2col"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {layout = "NHWC", padding = array<i64: 1, 1>, space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>}
func.func private @convolutions(%x: memref<1x3x8x8xf32>, %w: memref<6x1x3x3xf32>, %b: memref<6xf32>, %h: memref<1x8x8x16xf16>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %o = arith.constant 0 : index
  "hw.conv_elements"(%x, %w, %t, %o, %b) {shape = array<i64: 1, 6, 6, 6>, count = 144 : i64, padding = array<i64: 1, 0>, dilations = array<i64: 2, 1>, groups = 3 : i64} : (memref<1x3x8x8xf32>, memref<6x1x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index, memref<6xf32>) -> ()
  "hw.im2col"(%h, %a, %o, %o) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// An NCHW conv's transposed im2col tile and a store whose extra is read
// per row (broadcast over its dims of 1).
// CHECK-LABEL: func.func private @per_row_store
// CHECK: "hw.im2col"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {space = array<i64: 2, 8, 8>, transposed = true, window = array<i64: 3, 3>}
// CHECK: "hw.store"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {epilogue = @row_scale, operandSegmentSizes = array<i32: 1, 1, 1, 3>}
func.func private @row_scale(%acc: f32, %s: f16) -> f16 {
  %0 = arith.truncf %acc : f32 to f16
  %1 = arith.mulf %0, %s : f16
  return %1 : f16
}
func.func private @per_row_store(%x: memref<2x16x8x8xf16>, %y: memref<2x70x64xf16>, %s: memref<1x70x1xf16>) attributes {hw.kernel} {
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %o = arith.constant 0 : index
  "hw.im2col"(%x, %b, %o, %o) {space = array<i64: 2, 8, 8>, window = array<i64: 3, 3>, transposed = true} : (memref<2x16x8x8xf16>, memref<32x64xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.store"(%acc, %y, %s, %o, %o, %o) {epilogue = @row_scale, operandSegmentSizes = array<i32: 1, 1, 1, 3>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<2x70x64xf16>, memref<1x70x1xf16>, index, index, index) -> ()
  return
}
