// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s

// An elementwise group with broadcasting is one grid-stride kernel: 256
// threads of 8 elements, the operands loaded per thread broadcast into the
// result's index space, each nn op on register tiles, the result stored as
// a run of the space.
// CHECK-LABEL: func.func @elementwise
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}) {block = array<i64: 256>, grid = array<i64: 1>, kernel = @elementwise_elementwise_0}
// CHECK-NOT: "nn.
// CHECK-LABEL: func.func private @elementwise_elementwise_0
// CHECK-SAME: (%[[X:.+]]: memref<7x33xf32>, %[[B:.+]]: memref<33xf32>, %[[Y:.+]]: memref<7x33xf32>) attributes {hw.kernel}
// CHECK: %[[BLOCK:.+]] = "hw.block_id"()
// CHECK: scf.for %[[TILE:.+]] = %[[BLOCK]] to %{{.+}} step %{{.+}} {
// CHECK: %[[AT:.+]] = arith.muli %[[TILE]], %{{.+}} : index
// CHECK: "hw.load_elements"(%[[X]], %[[XT:.+]], %[[AT]]) {count = 2048 : i64, shape = array<i64: 7, 33>} : (memref<7x33xf32>, memref<2048xf32, #gpu.address_space<private>>, index) -> ()
// CHECK: "hw.load_elements"(%[[B]], %[[BT:.+]], %[[AT]]) {count = 2048 : i64, shape = array<i64: 7, 33>} : (memref<33xf32>
// CHECK: "hw.elementwise"(%[[XT]], %[[BT]], %[[S:.+]]) {fn = "nn.add"}
// CHECK: "hw.elementwise"(%[[S]], %[[E:.+]]) {fn = "nn.exp"}
// CHECK: "hw.elementwise"(%[[E]], %[[XT]], %[[P:.+]]) {fn = "nn.mul"}
// CHECK: "hw.store_elements"(%[[P]], %[[Y]], %[[AT]]) {count = 2048 : i64, shape = array<i64: 7, 33>}
func.func @elementwise(%x: tensor<7x33xf32>, %b: tensor<33xf32>) -> tensor<7x33xf32> {
  %0 = "nn.add"(%x, %b) : (tensor<7x33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
  %1 = "nn.exp"(%0) : (tensor<7x33xf32>) -> tensor<7x33xf32>
  %2 = "nn.mul"(%1, %x) : (tensor<7x33xf32>, tensor<7x33xf32>) -> tensor<7x33xf32>
  return %2 : tensor<7x33xf32>
}

// -----

// An elementwise group whose results differ in shape is a kernel per shape,
// each computing what its results need.
// CHECK-LABEL: func.func @two_shapes
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %[[A:.+]]) {block = array<i64: 256>, grid = array<i64: 1>, kernel = @two_shapes_elementwise_0_0} : ({{.+}}, memref<33xf32>) -> ()
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %[[C:.+]]) {block = array<i64: 256>, grid = array<i64: 1>, kernel = @two_shapes_elementwise_0_1} : ({{.+}}, memref<7x33xf32>) -> ()
// CHECK-LABEL: func.func private @two_shapes_elementwise_0_0
// CHECK-NOT: "nn.add"
// CHECK: "hw.store_elements"({{.+}}) {count = 2048 : i64, shape = array<i64: 33>}
func.func @two_shapes(%x: tensor<7x33xf32>, %b: tensor<33xf32>) -> (tensor<33xf32>, tensor<7x33xf32>) {
  %a = "nn.exp"(%b) : (tensor<33xf32>) -> tensor<33xf32>
  %c = "nn.add"(%x, %a) : (tensor<7x33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
  return %a, %c : tensor<33xf32>, tensor<7x33xf32>
}

// -----

// A softmax is one row kernel: a row of 33 elements in one warp (two
// elements per thread, of a 64-element tile), its statistics folded by
// block reductions into one-element tiles, with no scratch (one warp).
// CHECK-LABEL: func.func @softmax
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}) {block = array<i64: 32>, grid = array<i64: 7>, kernel = @softmax_reduction_0}
// CHECK-LABEL: func.func private @softmax_reduction_0
// CHECK-NOT: workgroup
// CHECK: "hw.load_elements"(%{{.+}}, %[[X:.+]], %{{.+}}) {count = 33 : i64, shape = array<i64: 7, 33>} : (memref<7x33xf32>, memref<64xf32, #gpu.address_space<private>>, index) -> ()
// CHECK: "hw.block_reduce"(%[[X]], %[[MAX:.+]]) {combine = "maximum", count = 33 : i64} : (memref<64xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
// CHECK: "hw.elementwise"(%[[X]], %[[MAX]], %{{.+}}) {fn = "nn.sub"}
// CHECK: "hw.elementwise"(%{{.+}}, %[[EXP:.+]]) {fn = "nn.exp"}
// CHECK: "hw.block_reduce"(%[[EXP]], %{{.+}}) {combine = "add", count = 33 : i64}
// CHECK: "hw.store_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 33 : i64, shape = array<i64: 7, 33>}
func.func @softmax(%x: tensor<7x33xf32>) -> tensor<7x33xf32> {
  %0 = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<7x33xf32>) -> tensor<7x33xf32>
  return %0 : tensor<7x33xf32>
}

// -----

// A layer_norm of rows of 4096 f16: 512 threads of 8 elements, reductions
// through a shared scratch tile of one f32 per warp; a mean is the sum
// divided by the row's length, in f32.
// CHECK-LABEL: func.func @layer_norm
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 512>, grid = array<i64: 4>, kernel = @layer_norm_reduction_0}
// CHECK-LABEL: func.func private @layer_norm_reduction_0
// CHECK: %[[SCRATCH:.+]] = "hw.alloc"() : () -> memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: "hw.cast"(%{{.+}}, %[[WIDE:.+]]) : (memref<4096xf16, #gpu.address_space<private>>, memref<4096xf32, #gpu.address_space<private>>) -> ()
// CHECK: "hw.block_reduce"(%[[WIDE]], %[[SUM:.+]], %[[SCRATCH]]) {combine = "add", count = 4096 : i64}
// CHECK: "hw.fill"(%[[LENGTH:.+]]) {value = 4.096000e+03 : f64}
// CHECK: "hw.elementwise"(%[[SUM]], %[[LENGTH]], %[[SUM]]) {fn = "nn.div"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.rsqrt"} : (memref<1xf32
// CHECK: "hw.store_elements"({{.+}}) {count = 4096 : i64, shape = array<i64: 4, 4096>} : (memref<4096xf16, #gpu.address_space<private>>, memref<4x4096xf16>, index) -> ()
func.func @layer_norm(%x: tensor<4x4096xf16>, %g: tensor<4096xf16>, %b: tensor<4096xf16>) -> tensor<4x4096xf16> {
  %0 = "nn.layer_norm"(%x, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x4096xf16>, tensor<4096xf16>, tensor<4096xf16>) -> tensor<4x4096xf16>
  return %0 : tensor<4x4096xf16>
}

// -----

// A reduction over the two trailing axes, without keepdims: rows of 308,
// the statistic stored as one element per row.
// CHECK-LABEL: func.func @sum_rows
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 64>, grid = array<i64: 3>, kernel = @sum_rows_reduce_sum_0}
// CHECK-LABEL: func.func private @sum_rows_reduce_sum_0
// CHECK: "hw.block_reduce"(%{{.+}}, %{{.+}}, %{{.+}}) {combine = "add", count = 308 : i64} : (memref<512xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<workgroup>>) -> ()
// CHECK: "hw.cast"(%{{.+}}, %[[H:.+]]) : (memref<1xf32, #gpu.address_space<private>>, memref<1xbf16, #gpu.address_space<private>>) -> ()
// CHECK: "hw.store_elements"(%[[H]], %{{.+}}, %{{.+}}) {count = 1 : i64, shape = array<i64: 3>}
func.func @sum_rows(%x: tensor<3x4x77xbf16>) -> tensor<3xbf16> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1, 2>} : (tensor<3x4x77xbf16>) -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// Comparisons and selects: the condition is an i1 register tile inside the
// kernel.
// CHECK-LABEL: func.func private @select_elementwise_0
// CHECK: "hw.elementwise"(%{{.+}}, %{{.+}}, %[[C:.+]]) {fn = "nn.compare", predicate = "lt"} : (memref<2048xf16, #gpu.address_space<private>>, memref<2048xf16, #gpu.address_space<private>>, memref<2048xi1, #gpu.address_space<private>>) -> ()
// CHECK: "hw.elementwise"(%[[C]], %{{.+}}, %{{.+}}, %{{.+}}) {fn = "nn.select"}
func.func @select(%x: tensor<3x1x50xf16>, %y: tensor<4x1xf16>) -> tensor<3x4x50xf16> {
  %c = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<3x1x50xf16>, tensor<4x1xf16>) -> tensor<3x4x50xi1>
  %s = "nn.select"(%c, %x, %y) : (tensor<3x4x50xi1>, tensor<3x1x50xf16>, tensor<4x1xf16>) -> tensor<3x4x50xf16>
  return %s : tensor<3x4x50xf16>
}

// -----

// A contraction group is its matmul's kernel, the group's other ops (a
// bias and gelu's decomposition) its epilogue, op by op in f32 with arith
// ops only.
// CHECK-LABEL: func.func @matmul_gelu
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 2, 2>, kernel = @matmul_gelu_matmul_0}
// CHECK-NOT: "nn.
// CHECK-LABEL: func.func private @matmul_gelu_matmul_0_epilogue(%{{.+}}: f32, %{{.+}}: f16) -> f16
// CHECK-NOT: math.erf
// CHECK: arith.divf
// CHECK: return
// CHECK-LABEL: func.func private @matmul_gelu_matmul_0
// CHECK: "hw.mma"
func.func @matmul_gelu(%a: tensor<100x64xf16>, %b: tensor<64x72xf16>, %bias: tensor<72xf16>) -> tensor<100x72xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<100x64xf16>, tensor<64x72xf16>) -> tensor<100x72xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<100x72xf16>, tensor<72xf16>) -> tensor<100x72xf16>
  %2 = "nn.gelu"(%1) : (tensor<100x72xf16>) -> tensor<100x72xf16>
  return %2 : tensor<100x72xf16>
}

// -----

// A reduction over leading axes walks its rows in place, strided: the kept
// dims first, then the folded ones, element by element.
// CHECK-LABEL: func.func private @leading_reduce_mean_0
// CHECK: "hw.load_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 42 : i64, order = array<i64: 1, 0, 2, 3>, shape = array<i64: 2, 5, 3, 7>}
// CHECK: "hw.block_reduce"(%{{.+}}, %{{.+}}) {combine = "add", count = 42 : i64} : (memref<64xf32
// CHECK: "hw.store_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 1 : i64, shape = array<i64: 1, 5, 1, 1>}
func.func @leading(%y: tensor<2x5x3x7xf16>) -> tensor<1x5x1x1xf16> {
  %0 = "nn.reduce_mean"(%y) {axes = array<i64: 0, 2, 3>, keepdims = true} : (tensor<2x5x3x7xf16>) -> tensor<1x5x1x1xf16>
  return %0 : tensor<1x5x1x1xf16>
}

// -----

// A row too long for a block's registers is walked in chunks of 8192,
// once per reduction and once for the results; the chunks' folds are
// folded.
// CHECK-LABEL: func.func private @long_rows_reduce_max_0
// CHECK: "hw.load_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 8192 : i64, shape = array<i64: 2, 20000>}
// CHECK: "hw.block_reduce"(%{{.+}}, %[[FIRST:.+]], %{{.+}}) {combine = "maximum", count = 8192 : i64}
// CHECK: "hw.load_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 8192 : i64, shape = array<i64: 2, 20000>}
// CHECK: "hw.block_reduce"(%{{.+}}, %[[SECOND:.+]], %{{.+}}) {combine = "maximum", count = 8192 : i64}
// CHECK: "hw.elementwise"(%[[FIRST]], %[[SECOND]], %[[FIRST]]) {fn = "nn.maximum"}
// CHECK: "hw.load_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 3616 : i64, shape = array<i64: 2, 20000>}
func.func @long_rows(%x: tensor<2x20000xf32>) -> tensor<2xf32> {
  %0 = "nn.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x20000xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A reduction of integers folds in their own type: i32 register tiles, the
// warps' totals through an i32 scratch (rows of 700: a block of several
// warps), no conversion to f32.
// CHECK-LABEL: func.func @integer_sum
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @integer_sum_reduce_sum_0}
// CHECK-LABEL: func.func private @integer_sum_reduce_sum_0(
// CHECK: %[[SCRATCH:.+]] = "hw.alloc"() : () -> memref<{{[0-9]+}}xi32, #gpu.address_space<workgroup>>
// CHECK-NOT: xf32
// CHECK: "hw.block_reduce"(%{{.+}}, %{{.+}}, %[[SCRATCH]]) {combine = "add", count = {{[0-9]+}} : i64} : (memref<{{[0-9]+}}xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<{{[0-9]+}}xi32, #gpu.address_space<workgroup>>) -> ()
func.func @integer_sum(%x: tensor<8x700xi32>) -> tensor<8xi32> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<8x700xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
