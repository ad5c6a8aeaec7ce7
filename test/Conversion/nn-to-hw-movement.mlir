// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw=chip=sm_80 | FileCheck %s

// Data movement, pooling and booleans as hw kernels (lowering/nn_to_hw/
// movement.py, pooling.py): each a grid-stride kernel over its result's
// index space, 256 threads of 8 elements, each element read through the
// op's index map (hw.gather_elements), made from its coordinate
// (hw.index_elements) or folded along an axis (hw.fold_axis), and the run
// stored (hw.store_elements); a reshape is a view.

// A transpose other than a swap of the last two dims is a gather over the
// result's space: source dim d follows result dim perm.index(d).
// CHECK-LABEL: func.func @transpose(
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}) {block = array<i64: 256>, grid = array<i64: 1>, kernel = @transpose_transpose_0} : (memref<5x7x3xf32>, memref<3x5x7xf32>) -> ()
// CHECK-LABEL: func.func private @transpose_transpose_0(
// CHECK: scf.for
// CHECK: "hw.gather_elements"(%{{.+}}, %[[TILE:.+]], %[[OFFSET:.+]]) {count = 2048 : i64, dims = array<i64: 1, 2, 0>, shape = array<i64: 3, 5, 7>}
// CHECK: "hw.store_elements"(%[[TILE]], %{{.+}}, %[[OFFSET]]) {count = 2048 : i64, shape = array<i64: 3, 5, 7>}
func.func @transpose(%x: tensor<5x7x3xf32>) -> tensor<3x5x7xf32> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<5x7x3xf32>) -> tensor<3x5x7xf32>
  return %0 : tensor<3x5x7xf32>
}

// -----

// A swap of the last two dims goes through shared memory, a 32x32 tile per
// block (one column of padding): the tile copied in, gathered across its
// rows between barriers, stored as a box of the result at the tile's place.
// CHECK-LABEL: func.func @swap_last_two(
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}) {block = array<i64: 256>, grid = array<i64: 12>, kernel = @swap_last_two_transpose_0}
// CHECK-LABEL: func.func private @swap_last_two_transpose_0(
// CHECK: %[[SHARED:.+]] = "hw.alloc"() : () -> memref<32x33xf16, #gpu.address_space<workgroup>>
// CHECK: %[[TILE:.+]] = "hw.alloc"() : () -> memref<1024xf16, #gpu.address_space<private>>
// CHECK: scf.for
// CHECK: "hw.copy"(%arg0, %[[SHARED]], %[[BATCH:.+]], %[[ROW:.+]], %[[COL:.+]]) : (memref<2x40x70xf16>
// CHECK-NEXT: "hw.barrier"
// CHECK: "hw.gather_elements"(%[[SHARED]], %[[TILE]], %{{.+}}) {count = 1024 : i64, dims = array<i64: 1, 0>, shape = array<i64: 32, 32>}
// CHECK-NEXT: "hw.barrier"
// CHECK: "hw.store_elements"(%[[TILE]], %arg1, %{{.+}}, %[[BATCH]], %[[COL]], %[[ROW]]) {count = 1024 : i64, shape = array<i64: 1, 32, 32>}
func.func @swap_last_two(%x: tensor<2x40x70xf16>) -> tensor<2x70x40xf16> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x40x70xf16>) -> tensor<2x70x40xf16>
  return %0 : tensor<2x70x40xf16>
}

// -----

// A transpose that moves only dims of 1 keeps the elements' order: a view.
// CHECK-LABEL: func.func @moves_ones(
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
// CHECK-NOT: "hw.launch"
func.func @moves_ones(%x: tensor<5x1x7xf32>) -> tensor<1x5x7xf32> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 1, 0, 2>} : (tensor<5x1x7xf32>) -> tensor<1x5x7xf32>
  return %0 : tensor<1x5x7xf32>
}

// -----

// A reshape is no kernel: a view of its operand's buffer.
// CHECK-LABEL: func.func @reshape(
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<2x6xf16> into tensor<12xf16>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [3, 4] : tensor<12xf16> into tensor<3x4xf16>
// CHECK-NOT: "hw.launch"
// CHECK-NOT: hw.kernel
func.func @reshape(%x: tensor<2x6xf16>) -> tensor<3x4xf16> {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf16>) -> tensor<3x4xf16>
  return %0 : tensor<3x4xf16>
}

// -----

// A broadcast: the operand's dims of 1 read at 0 (dims -1), its dims
// aligned with the result's trailing ones.
// CHECK-LABEL: func.func @broadcast_to(
// CHECK-LABEL: func.func private @broadcast_to_broadcast_to_0(
// CHECK: "hw.gather_elements"({{.+}}) {count = 2048 : i64, dims = array<i64: 1, -1>, shape = array<i64: 2, 4, 3>} : (memref<4x1xbf16>, memref<2048xbf16, #gpu.address_space<private>>, index)
func.func @broadcast_to(%x: tensor<4x1xbf16>) -> tensor<2x4x3xbf16> {
  %0 = "nn.broadcast_to"(%x) : (tensor<4x1xbf16>) -> tensor<2x4x3xbf16>
  return %0 : tensor<2x4x3xbf16>
}

// -----

// A strided slice of integers: starts and strides per dim.
// CHECK-LABEL: func.func private @slice_slice_0(
// CHECK: "hw.gather_elements"({{.+}}) {count = 2048 : i64, dims = array<i64: 0, 1>, shape = array<i64: 3, 2>, starts = array<i64: 2, 1>, strides = array<i64: 3, 2>} : (memref<9x8xi32>, memref<2048xi32, #gpu.address_space<private>>, index)
// CHECK: "hw.store_elements"({{.+}}) {{.+}} : (memref<2048xi32, #gpu.address_space<private>>, memref<3x2xi32>, index)
func.func @slice(%x: tensor<9x8xi32>) -> tensor<3x2xi32> {
  %0 = "nn.slice"(%x) {starts = array<i64: 2, 1>, limits = array<i64: 9, 5>, strides = array<i64: 3, 2>} : (tensor<9x8xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// A pad: the source shifted by the low padding, the value outside it.
// CHECK-LABEL: func.func private @pad_pad_0(
// CHECK: "hw.gather_elements"({{.+}}) {count = 2048 : i64, dims = array<i64: 0, 1>, shape = array<i64: 2, 6>, starts = array<i64: 0, -1>, value = -1.500000e+00 : f64}
func.func @pad(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = "nn.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = -1.5 : f32} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// A concatenation: one gather per operand into the same tile, each shifted
// to where its operand starts (no value: the others' positions are left).
// CHECK-LABEL: func.func private @concat_concat_0(
// CHECK: "hw.gather_elements"(%arg0, %[[TILE:.+]], %[[OFFSET:.+]]) {count = 2048 : i64, dims = array<i64: 0, 1>, shape = array<i64: 5, 4>, starts = array<i64: 0, 0>}
// CHECK-NOT: value
// CHECK: "hw.gather_elements"(%arg1, %[[TILE]], %[[OFFSET]]) {count = 2048 : i64, dims = array<i64: 0, 1>, shape = array<i64: 5, 4>, starts = array<i64: -2, 0>}
// CHECK: "hw.store_elements"(%[[TILE]], %arg2, %[[OFFSET]])
func.func @concat(%a: tensor<2x4xi64>, %b: tensor<3x4xi64>) -> tensor<5x4xi64> {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xi64>, tensor<3x4xi64>) -> tensor<5x4xi64>
  return %0 : tensor<5x4xi64>
}

// -----

// A table lookup: source dim 0 at the indices held at result dims 0 and 1.
// CHECK-LABEL: func.func private @gather_gather_0(
// CHECK: "hw.gather_elements"(%arg0, %{{.+}}, %{{.+}}, %arg1) {count = 2048 : i64, dims = array<i64: 0, 2>, shape = array<i64: 1, 5, 8>} : (memref<100x8xf16>, memref<2048xf16, #gpu.address_space<private>>, index, memref<1x5xi64>)
func.func @gather(%t: tensor<100x8xf16>, %ids: tensor<1x5xi64>) -> tensor<1x5x8xf16> {
  %0 = "nn.gather"(%t, %ids) {axis = 0 : i64} : (tensor<100x8xf16>, tensor<1x5xi64>) -> tensor<1x5x8xf16>
  return %0 : tensor<1x5x8xf16>
}

// -----

// CHECK-LABEL: func.func @iota(
// CHECK: "hw.launch"(%{{.+}}) {{.+}} : (memref<3x4xi64>) -> ()
// CHECK: "hw.index_elements"({{.+}}) {axis = 1 : i64, count = 2048 : i64, shape = array<i64: 3, 4>} : (memref<2048xi64, #gpu.address_space<private>>, index)
func.func @iota() -> tensor<3x4xi64> {
  %0 = "nn.iota"() {axis = 1 : i64} : () -> tensor<3x4xi64>
  return %0 : tensor<3x4xi64>
}

// -----

// CHECK-LABEL: func.func private @cumsum_cumsum_0(
// CHECK: "hw.fold_axis"({{.+}}) {axis = 1 : i64, count = 2048 : i64, kind = "prefix_sum", shape = array<i64: 2, 8>} : (memref<2x8xf32>, memref<2048xf32, #gpu.address_space<private>>, index)
func.func @cumsum(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = "nn.cumsum"(%x) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An argmax of bf16 into i64 indices, the axis kept as size 1.
// CHECK-LABEL: func.func private @argmax_argmax_0(
// CHECK: "hw.fold_axis"({{.+}}) {axis = 1 : i64, count = 2048 : i64, kind = "argmax", shape = array<i64: 2, 1>} : (memref<2x8xbf16>, memref<2048xi64, #gpu.address_space<private>>, index)
func.func @argmax(%x: tensor<2x8xbf16>) -> tensor<2x1xi64> {
  %0 = "nn.argmax"(%x) {axis = 1 : i64, keepdims = true} : (tensor<2x8xbf16>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// A max pooling of f16: each of the 4 taps gathered (-inf outside),
// widened to f32 and folded; the f32 maximum rounded once.
// CHECK-LABEL: func.func private @max_pool2d_max_pool2d_0(
// CHECK: "hw.gather_elements"({{.+}}) {{{.+}}starts = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1, 2, 2>, value = 0xFFF0000000000000 : f64}
// CHECK: "hw.cast"(%{{.+}}, %[[ACC:.+]]) : (memref<2048xf16
// CHECK: "hw.gather_elements"({{.+}}) {{{.+}}starts = array<i64: 0, 0, 0, 1>
// CHECK: "hw.elementwise"(%[[ACC]], %{{.+}}, %[[ACC]]) {fn = "nn.maximum"}
// CHECK: "hw.gather_elements"({{.+}}) {{{.+}}starts = array<i64: 0, 0, 1, 0>
// CHECK: "hw.gather_elements"({{.+}}) {{{.+}}starts = array<i64: 0, 0, 1, 1>
// CHECK: "hw.elementwise"(%[[ACC]], %{{.+}}, %[[ACC]]) {fn = "nn.maximum"}
// CHECK: "hw.cast"(%[[ACC]], %{{.+}}) : (memref<2048xf32, #gpu.address_space<private>>, memref<2048xf16
// CHECK-NOT: "hw.gather_elements"
func.func @max_pool2d(%x: tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16> {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16>
  return %0 : tensor<1x3x4x4xf16>
}

// -----

// An average pooling of NHWC f32 with padding: rows and columns are dims
// 1 and 2; the taps fold into the result's tile, divided by the window.
// CHECK-LABEL: func.func private @avg_pool2d_nhwc_avg_pool2d_0(
// CHECK: "hw.gather_elements"({{.+}}) {{{.+}}starts = array<i64: 0, -1, -1, 0>, strides = array<i64: 1, 2, 2, 1>, value = 0.000000e+00 : f64}
// CHECK-COUNT-8: "hw.elementwise"(%{{.+}}) {fn = "nn.add"}
// CHECK: "hw.fill"(%[[SIZE:.+]]) {value = 9.000000e+00 : f64} : (memref<1xf32
// CHECK: "hw.elementwise"(%{{.+}}, %[[SIZE]], %{{.+}}) {fn = "nn.div"}
// CHECK-NOT: "hw.cast"
func.func @avg_pool2d_nhwc(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, layout = "NHWC"} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// A boolean crosses a kernel boundary: the comparison's kernel stores i1,
// the transpose's gathers i1.
// CHECK-LABEL: func.func private @booleans_compare_0(
// CHECK: "hw.store_elements"({{.+}}) {{.+}} : (memref<2048xi1, #gpu.address_space<private>>, memref<4x7xi1>, index)
// CHECK-LABEL: func.func private @booleans_transpose_0(
// CHECK: "hw.gather_elements"({{.+}}) {{.+}} : (memref<4x7xi1>, memref<2048xi1, #gpu.address_space<private>>, index)
func.func @booleans(%x: tensor<4x7xf32>, %y: tensor<4x7xf32>) -> tensor<7x4xi1> {
  %m = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xi1>
  %t = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<4x7xi1>) -> tensor<7x4xi1>
  return %t : tensor<7x4xi1>
}

// -----

// Negative: an empty result is a new buffer, with no kernel and no launch.
// CHECK-LABEL: func.func @empty(
// CHECK: memref.alloc() : memref<4x0xf32>
// CHECK-NOT: "hw.launch"
// CHECK-NOT: hw.kernel
func.func @empty(%a: tensor<0x4xf32>) -> tensor<4x0xf32> {
  %0 = "nn.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<0x4xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
