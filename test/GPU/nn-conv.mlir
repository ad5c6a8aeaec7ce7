// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=hw | FileCheck %s
// RUN: lamina-run %s --entry conv3x3_bias_relu --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry conv3x3_bias_relu --target=cuda:sm_90a --emulate --random --seed 3 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry depthwise --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry depthwise --target=cuda:sm_90a --emulate --random --seed 5 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry strided_nhwc --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry strided_nhwc --target=cuda:sm_90a --emulate --random --seed 7 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry basic_block --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry basic_block_f16 --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry basic_block_f16 --target=cuda:sm_90a --emulate --random --seed 13 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry basic_block --target=cuda:sm_90a --emulate --random --seed 9 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// nn.conv2d on the GPU, emulated (each kernel passes hw-check and the
// hazard checker first: the hw stage, which --emit=hw runs too) against the nn program's NumPy reference at the
// result type's tolerance: an f16 3x3 conv with its bias and relu as an
// implicit GEMM on tensor cores (hw.im2col gathers each K step's A tile,
// the filter's OIHW rows are B read transposed, the bias and relu are the
// store's epilogue), a depthwise f32 conv and the convs of a ResNet basic
// block (conv, batch norm as a per-channel scale and shift, relu, conv,
// batch norm, residual add, relu) as direct kernels (hw.conv_elements, the
// group's ops on the sums in registers) in f32 and as implicit GEMMs in
// f16 (NCHW: a batch of the images' O x OH*OW matrices, the filter's rows
// times the transposed im2col tile, the batch norm's values per row), and
// a strided, dilated bf16 NHWC conv as an implicit GEMM; sizes no tile
// divides. ptxas accepts every
// kernel with no spills for sm_80 and sm_90a (which runs sm_80's mma.sync
// path: wgmma's operands come by TMA, and im2col is a gather).

// EMULATED-NOT: mismatch
// EMULATED: check: all results match the reference

// CONTRACT-NOT: BROKEN
// CONTRACT: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: BROKEN

// CHECK-LABEL: func.func @conv3x3_bias_relu(
// CHECK: memref.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : memref<16x12x3x3xf16> into memref<16x108xf16>
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, {{.+}}kernel = @conv3x3_bias_relu_conv2d_0}
// CHECK: memref.expand_shape %{{.+}} {{\[}}[0, 1, 2], [3]] output_shape [2, 9, 7, 16] : memref<126x16xf16> into memref<2x9x7x16xf16>
// (The host functions come first, then the kernels.)
// CHECK-LABEL: func.func @basic_block(
// CHECK-COUNT-2: "hw.launch"
// CHECK-NOT: "hw.launch"
// CHECK: return
// CHECK-LABEL: func.func @basic_block_f16(
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 1, 2>, kernel = @basic_block_f16_conv2d_0}
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 1, 2>, kernel = @basic_block_f16_conv2d_1}
// CHECK-NOT: "hw.launch"
// CHECK: return
// CHECK-LABEL: func.func private @conv3x3_bias_relu_conv2d_0_epilogue(
// CHECK-SAME: %{{.+}}: f32, %{{.+}}: f16) -> f16
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK: arith.maximumf
// CHECK-LABEL: func.func private @conv3x3_bias_relu_conv2d_0(
// CHECK-SAME: %{{.+}}: memref<2x9x7x12xf16>, %{{.+}}: memref<16x108xf16>, %{{.+}}: memref<16xf16>, %{{.+}}: memref<126x16xf16>) attributes {hw.kernel}
// CHECK: scf.for
// CHECK: "hw.im2col"(%{{.+}}) {dilations = array<i64: 1, 1>, layout = "NHWC", padding = array<i64: 1, 1>, space = array<i64: 2, 9, 7>, strides = array<i64: 1, 1>, window = array<i64: 3, 3>}
// CHECK: "hw.copy"
// CHECK: "hw.barrier"
// CHECK: "hw.mma"(%{{.+}}) {transpose_b = true}
// CHECK: "hw.barrier"
// CHECK: "hw.store"({{.+}}) {epilogue = @conv3x3_bias_relu_conv2d_0_epilogue
func.func @conv3x3_bias_relu(%x: tensor<2x9x7x12xf16>, %w: tensor<16x12x3x3xf16>, %b: tensor<16xf16>) -> tensor<2x9x7x16xf16> {
  %y = "nn.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<2x9x7x12xf16>, tensor<16x12x3x3xf16>, tensor<16xf16>) -> tensor<2x9x7x16xf16>
  %r = "nn.relu"(%y) : (tensor<2x9x7x16xf16>) -> tensor<2x9x7x16xf16>
  return %r : tensor<2x9x7x16xf16>
}

// A depthwise conv (groups = C): each output channel reads its own input
// channel; one output element per thread.
// CHECK-LABEL: func.func private @depthwise_conv2d_0(
// CHECK: "hw.conv_elements"(%{{.+}}) {count = 256 : i64, dilations = array<i64: 1, 1>, groups = 6 : i64, padding = array<i64: 1, 1>, shape = array<i64: 1, 6, 11, 10>, strides = array<i64: 1, 1>}
// CHECK-NEXT: "hw.store_elements"
func.func @depthwise(%x: tensor<1x6x11x10xf32>, %w: tensor<6x1x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x11x10xf32> {
  %y = "nn.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1, 1, 1>, groups = 6 : i64} : (tensor<1x6x11x10xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<1x6x11x10xf32>
  return %y : tensor<1x6x11x10xf32>
}

// A strided, dilated bf16 NHWC conv with uneven padding: implicit GEMM.
// CHECK-LABEL: func.func private @strided_nhwc_conv2d_0(
// CHECK: "hw.im2col"(%{{.+}}) {dilations = array<i64: 2, 1>, layout = "NHWC", padding = array<i64: 2, 0>, space = array<i64: 1, 5, 4>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>}
// CHECK: "hw.mma"
func.func @strided_nhwc(%x: tensor<1x11x9x3xbf16>, %w: tensor<8x3x3x3xbf16>) -> tensor<1x5x4x8xbf16> {
  %y = "nn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, padding = array<i64: 2, 0, 1, 1>, layout = "NHWC"} : (tensor<1x11x9x3xbf16>, tensor<8x3x3x3xbf16>) -> tensor<1x5x4x8xbf16>
  return %y : tensor<1x5x4x8xbf16>
}

// A ResNet basic block: conv, batch norm (inference: a per-channel scale
// and shift), relu, conv, batch norm, the residual add and relu; each
// conv is one kernel with the ops after it fused.
// CHECK-LABEL: func.func private @basic_block_conv2d_0(
// CHECK: "hw.conv_elements"
// CHECK: "hw.load_elements"
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.mul"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.add"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.relu"}
// CHECK: "hw.store_elements"
// CHECK-LABEL: func.func private @basic_block_conv2d_1(
// CHECK: "hw.conv_elements"
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.mul"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.add"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.add"}
// CHECK: "hw.elementwise"({{.+}}) {fn = "nn.relu"}
// CHECK: "hw.store_elements"
func.func @basic_block(%x: tensor<2x8x7x7xf32>, %w1: tensor<8x8x3x3xf32>, %s1: tensor<1x8x1x1xf32>, %t1: tensor<1x8x1x1xf32>, %w2: tensor<8x8x3x3xf32>, %s2: tensor<1x8x1x1xf32>, %t2: tensor<1x8x1x1xf32>) -> tensor<2x8x7x7xf32> {
  %c1 = "nn.conv2d"(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x7x7xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x7x7xf32>
  %m1 = "nn.mul"(%c1, %s1) : (tensor<2x8x7x7xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x7x7xf32>
  %a1 = "nn.add"(%m1, %t1) : (tensor<2x8x7x7xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x7x7xf32>
  %r1 = "nn.relu"(%a1) : (tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  %c2 = "nn.conv2d"(%r1, %w2) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x7x7xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x7x7xf32>
  %m2 = "nn.mul"(%c2, %s2) : (tensor<2x8x7x7xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x7x7xf32>
  %a2 = "nn.add"(%m2, %t2) : (tensor<2x8x7x7xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x7x7xf32>
  %sum = "nn.add"(%a2, %x) : (tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  %r2 = "nn.relu"(%sum) : (tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  return %r2 : tensor<2x8x7x7xf32>
}

// The block in f16: each conv an implicit GEMM per image (the grid's third
// dim), the filter's rows (A) times the image's transposed im2col tile
// (B: taps by pixels), the batch norm's scale and shift read per row
// ([1, O, 1]), the residual as the result's matrices ([N, O, OH*OW]).
// CHECK-LABEL: func.func private @basic_block_f16_conv2d_1(
// CHECK-SAME: %{{.+}}: memref<2x8x7x7xf16>, %{{.+}}: memref<8x72xf16>, %{{.+}}: memref<1x8x1xf16>, %{{.+}}: memref<1x8x1xf16>, %{{.+}}: memref<2x8x49xf16>, %{{.+}}: memref<2x8x49xf16>) attributes {hw.kernel}
// CHECK: "hw.block_id"() {dim = 2 : i64}
// CHECK: "hw.copy"(%{{.+}}) : (memref<8x72xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
// CHECK: "hw.im2col"({{.+}}) {dilations = array<i64: 1, 1>, padding = array<i64: 1, 1>, space = array<i64: 2, 7, 7>, strides = array<i64: 1, 1>, transposed = true, window = array<i64: 3, 3>}
// CHECK: "hw.mma"(%{{.+}}, %{{.+}}, %{{.+}}) : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
// CHECK: "hw.store"
func.func @basic_block_f16(%x: tensor<2x8x7x7xf16>, %w1: tensor<8x8x3x3xf16>, %s1: tensor<1x8x1x1xf16>, %t1: tensor<1x8x1x1xf16>, %w2: tensor<8x8x3x3xf16>, %s2: tensor<1x8x1x1xf16>, %t2: tensor<1x8x1x1xf16>) -> tensor<2x8x7x7xf16> {
  %c1 = "nn.conv2d"(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x7x7xf16>, tensor<8x8x3x3xf16>) -> tensor<2x8x7x7xf16>
  %m1 = "nn.mul"(%c1, %s1) : (tensor<2x8x7x7xf16>, tensor<1x8x1x1xf16>) -> tensor<2x8x7x7xf16>
  %a1 = "nn.add"(%m1, %t1) : (tensor<2x8x7x7xf16>, tensor<1x8x1x1xf16>) -> tensor<2x8x7x7xf16>
  %r1 = "nn.relu"(%a1) : (tensor<2x8x7x7xf16>) -> tensor<2x8x7x7xf16>
  %c2 = "nn.conv2d"(%r1, %w2) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x7x7xf16>, tensor<8x8x3x3xf16>) -> tensor<2x8x7x7xf16>
  %m2 = "nn.mul"(%c2, %s2) : (tensor<2x8x7x7xf16>, tensor<1x8x1x1xf16>) -> tensor<2x8x7x7xf16>
  %a2 = "nn.add"(%m2, %t2) : (tensor<2x8x7x7xf16>, tensor<1x8x1x1xf16>) -> tensor<2x8x7x7xf16>
  %sum = "nn.add"(%a2, %x) : (tensor<2x8x7x7xf16>, tensor<2x8x7x7xf16>) -> tensor<2x8x7x7xf16>
  %r2 = "nn.relu"(%sum) : (tensor<2x8x7x7xf16>) -> tensor<2x8x7x7xf16>
  return %r2 : tensor<2x8x7x7xf16>
}
