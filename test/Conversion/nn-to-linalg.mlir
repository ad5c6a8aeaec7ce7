// RUN: lamina-opt %s --split-input-file --convert-nn-to-linalg | FileCheck %s

// f16 is computed on in f32: extended on the way in, rounded once on the way out.

// CHECK-LABEL: func.func @gelu_tanh_f16
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf16>)
// CHECK-NOT: "nn.
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<3x5xf16>
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<3x5xf16>) outs(%[[INIT]] : tensor<3x5xf16>)
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK: %[[WIDE:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK: math.tanh
// CHECK: %[[NARROW:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT: linalg.yield %[[NARROW]] : f16
// CHECK: return %[[Y]]
func.func @gelu_tanh_f16(%x: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %0 = "nn.gelu"(%x) {approximate = "tanh"} : (tensor<3x5xf16>) -> tensor<3x5xf16>
  return %0 : tensor<3x5xf16>
}

// -----

// The exact gelu goes through erf.

// CHECK-LABEL: func.func @gelu_erf
// CHECK-NOT: "nn.
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK-NOT: math.tanh
func.func @gelu_erf(%x: tensor<7xf32>) -> tensor<7xf32> {
  %0 = "nn.gelu"(%x) : (tensor<7xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// Broadcasting is in the indexing maps: a size-1 dim that grows reads index 0,
// and a lower-rank operand is aligned to the trailing loops.

// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<4x1xf32>, %[[Y:.+]]: tensor<3xf32>)
// CHECK-NOT: "nn.
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ID]]]
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<4x1xf32>, tensor<3xf32>)
// CHECK: arith.addf
// CHECK: -> tensor<4x3xf32>
func.func @add_broadcast(%x: tensor<4x1xf32>, %y: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "nn.add"(%x, %y) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Comparisons produce i1 tensors; select takes them as its condition.

// CHECK-LABEL: func.func @compare_select
// CHECK-NOT: "nn.
// CHECK: %[[MASK:.+]] = linalg.generic
// CHECK: arith.cmpf une
// CHECK: -> tensor<4xi1>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[MASK]], %{{.+}}, %{{.+}} : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[C:.+]]: i1, %[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.select %[[C]], %[[A]], %[[B]] : f32
func.func @compare_select(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.compare"(%x, %y) {predicate = "ne"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "nn.select"(%0, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Float to i1 is `x != 0`; i1 to float is 0 or 1.

// CHECK-LABEL: func.func @cast_through_bool
// CHECK-NOT: "nn.
// CHECK: %[[WIDE:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpf une, %[[WIDE]], %[[ZERO]] : f32
// CHECK: -> tensor<4xi1>
// CHECK: %[[ONE_OR_ZERO:.+]] = arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.truncf %[[ONE_OR_ZERO]] : f32 to f16
// CHECK: -> tensor<4xf16>
func.func @cast_through_bool(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = "nn.cast"(%x) : (tensor<4xbf16>) -> tensor<4xi1>
  %1 = "nn.cast"(%0) : (tensor<4xi1>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x16xf32>)
// CHECK-NOT: "nn.
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: %[[C:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<4x16xf32>)
// CHECK: return %[[C]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Batch dims that broadcast are materialised, then collapsed into one.

// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<2x1x3x5xf32>, %[[B:.+]]: tensor<3x5x6xf32>)
// CHECK-NOT: "nn.
// CHECK-DAG: %[[A_DROPPED:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0], [1, 2], [3]] : tensor<2x1x3x5xf32> into tensor<2x3x5xf32>
// CHECK-DAG: %[[A_FULL:.+]] = linalg.broadcast ins(%[[A_DROPPED]] : tensor<2x3x5xf32>) outs(%{{.+}} : tensor<2x3x3x5xf32>) dimensions = [1]
// CHECK-DAG: %[[A_BATCH:.+]] = tensor.collapse_shape %[[A_FULL]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x5xf32> into tensor<6x3x5xf32>
// CHECK-DAG: %[[B_FULL:.+]] = linalg.broadcast ins(%[[B]] : tensor<3x5x6xf32>) outs(%{{.+}} : tensor<2x3x5x6xf32>) dimensions = [0]
// CHECK-DAG: %[[B_BATCH:.+]] = tensor.collapse_shape %[[B_FULL]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x6xf32> into tensor<6x5x6xf32>
// CHECK: %[[C:.+]] = linalg.batch_matmul ins(%[[A_BATCH]], %[[B_BATCH]] : tensor<6x3x5xf32>, tensor<6x5x6xf32>)
// CHECK: %[[OUT:.+]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 3, 6] : tensor<6x3x6xf32> into tensor<2x3x3x6xf32>
// CHECK: return %[[OUT]]
func.func @matmul_batch_broadcast(%a: tensor<2x1x3x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x3x6xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x1x3x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x3x6xf32>
  return %0 : tensor<2x3x3x6xf32>
}

// -----

// One weight matrix for every batch: the batches' rows form one linalg.matmul,
// accumulated in f32 and rounded to bf16 once.

// CHECK-LABEL: func.func @matmul_shared_weights_bf16
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x5xbf16>, %[[B:.+]]: tensor<5x4xbf16>)
// CHECK-NOT: "nn.
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<2x3x5xbf16> into tensor<6x5xbf16>
// CHECK: %[[C:.+]] = linalg.matmul ins(%[[ROWS]], %[[B]] : tensor<6x5xbf16>, tensor<5x4xbf16>) outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: %[[C3:.+]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[C3]] : tensor<2x3x4xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: -> tensor<2x3x4xbf16>
// CHECK-NOT: linalg.batch_matmul
func.func @matmul_shared_weights_bf16(%a: tensor<2x3x5xbf16>, %b: tensor<5x4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x3x5xbf16>, tensor<5x4xbf16>) -> tensor<2x3x4xbf16>
  return %0 : tensor<2x3x4xbf16>
}

// -----

// Padding is a tensor.pad with zeros; the bias is added along the channels.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CHANNEL:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv2d_padded_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[BIAS:.+]]: tensor<4xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[PADDED:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: tensor.yield %{{.+}} : f32
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x9x9xf32>
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %[[W]] : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$CHANNEL]], #[[$ID]]]
// CHECK-SAME: ins(%[[CONV]], %[[BIAS]] : tensor<1x4x4x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
func.func @conv2d_padded_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "nn.conv2d"(%x, %w, %b) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Groups become a dim of their own.

// CHECK-LABEL: func.func @conv2d_grouped
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x6x6xf32>, %[[W:.+]]: tensor<6x2x3x3xf32>)
// CHECK-NOT: "nn.
// CHECK-DAG: %[[XG:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 6, 6] : tensor<1x4x6x6xf32> into tensor<1x2x2x6x6xf32>
// CHECK-DAG: %[[WG:.+]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK: %[[CONV:.+]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[XG]], %[[WG]] : tensor<1x2x2x6x6xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.+}} : tensor<1x2x3x4x4xf32>)
// CHECK: %[[Y:.+]] = tensor.collapse_shape %[[CONV]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x4x4xf32> into tensor<1x6x4x4xf32>
// CHECK: return %[[Y]]
func.func @conv2d_grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32> {
  %0 = "nn.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// Max pooling pads with -inf, so that padding never wins.

// CHECK-LABEL: func.func @max_pool2d
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x7x7xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[WINDOW:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[PADDED:.+]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: %[[PAD_VALUE:.+]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.yield %[[PAD_VALUE]] : f32
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK: %[[Y:.+]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %[[WINDOW]] : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x3x4x4xf32>)
// CHECK: return %[[Y]]
func.func @max_pool2d(%x: tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Average pooling sums, then divides by the window size.

// CHECK-LABEL: func.func @avg_pool2d
// CHECK-NOT: "nn.
// CHECK-NOT: tensor.pad
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<1x3x4x4xf32>)
// CHECK: %[[SIZE:.+]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[SIZE]] : f32
func.func @avg_pool2d(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// A reduction is a generic with reduction iterators into the kept dims;
// keepdims expands them back.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce_mean_keepdims
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<2xf32>)
// CHECK: arith.divf
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[MEAN]] {{\[}}[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK: return %[[Y]]
func.func @reduce_mean_keepdims(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %0 = "nn.reduce_mean"(%x) {axes = array<i64: -1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Softmax subtracts the row max before exp.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<2x8xf32>, tensor<2xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[M:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[SHIFTED:.+]] = arith.subf %[[IN]], %[[M]] : f32
// CHECK: math.exp %[[SHIFTED]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[GAMMA:.+]]: tensor<8xf32>, %[[BETA:.+]]: tensor<8xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2xf32>)
// CHECK: %[[SQUARES:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]] : tensor<2x8xf32>, tensor<2xf32>)
// CHECK: %[[INV_STD:.+]] = linalg.generic {{.*}} ins(%[[SQUARES]] : tensor<2xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %[[INV_STD]], %[[GAMMA]], %[[BETA]] : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @layer_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = "nn.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// k is read transposed through the batch_matmul's indexing maps; causal
// masking puts -inf where the key index exceeds the query index.

// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$KT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$S:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @attention_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8xf32>, %[[K:.+]]: tensor<2x6x8xf32>, %[[V:.+]]: tensor<2x6x3xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[SCORES:.+]] = linalg.batch_matmul indexing_maps = [#[[$Q]], #[[$KT]], #[[$S]]] ins(%[[Q]], %[[K]] : tensor<2x4x8xf32>, tensor<2x6x8xf32>)
// CHECK: %[[LOGITS:.+]] = linalg.generic {{.*}} ins(%[[SCORES]] : tensor<2x4x6xf32>)
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.353553385 : f32
// CHECK-DAG: %[[KEY:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[QUERY:.+]] = linalg.index 1 : index
// CHECK: %[[HIDDEN:.+]] = arith.cmpi ugt, %[[KEY]], %[[QUERY]] : index
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[HIDDEN]], %[[NEG_INF]], %{{.+}} : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} ins(%[[LOGITS]] : tensor<2x4x6xf32>)
// CHECK: arith.maximumf
// CHECK: %[[WEIGHTS:.+]] = linalg.generic {{.*}} ins(%[[LOGITS]], %[[MAX]] : tensor<2x4x6xf32>, tensor<2x4xf32>)
// CHECK: math.exp
// CHECK: %[[TOTAL:.+]] = linalg.generic {{.*}} ins(%[[WEIGHTS]] : tensor<2x4x6xf32>)
// CHECK: %[[OUT:.+]] = linalg.batch_matmul ins(%[[WEIGHTS]], %[[V]] : tensor<2x4x6xf32>, tensor<2x6x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[OUT]], %[[TOTAL]] : tensor<2x4x3xf32>, tensor<2x4xf32>)
// CHECK: arith.divf
func.func @attention_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x4x3xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// The additive mask broadcasts over the batch dims of the scores.

// CHECK-DAG: #[[$MASK:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @attention_mask
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<4x6xf32>
// CHECK-NOT: "nn.
// CHECK: %[[SCORES:.+]] = linalg.batch_matmul
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$MASK]], #{{.+}}]
// CHECK-SAME: ins(%[[SCORES]], %[[MASK]] : tensor<2x4x6xf32>, tensor<4x6xf32>)
// CHECK: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: arith.addf %[[SCALED]], %{{.+}} : f32
// CHECK-NOT: linalg.index
func.func @attention_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %mask: tensor<4x6xf32>) -> tensor<2x4x3xf32> {
  %0 = "nn.attention"(%q, %k, %v, %mask) {scale = 0.5 : f32} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NOT: "nn.
// CHECK-DAG: %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK-DAG: %[[R:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-DAG: %[[B:.+]] = linalg.broadcast ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<5x2x3x4xf32>) dimensions = [0]
// CHECK-DAG: %[[C:.+]] = tensor.concat dim(1) %[[X]], %[[X]] : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
// CHECK-DAG: %[[S:.+]] = tensor.extract_slice %[[X]][1, 0, 1] [1, 2, 2] [1, 2, 2] : tensor<2x3x4xf32> to tensor<1x2x2xf32>
// CHECK-DAG: %[[P:.+]] = tensor.pad %[[X]] low[0, 1, 0] high[0, 0, 3]
// CHECK-DAG: %[[FILL:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: tensor.yield %[[FILL]] : f32
// CHECK: return %[[T]], %[[R]], %[[B]], %[[C]], %[[S]], %[[P]]
func.func @data_movement(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<5x2x3x4xf32>, tensor<2x6x4xf32>, tensor<1x2x2xf32>, tensor<2x4x7xf32>) {
  %0 = "nn.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = "nn.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %2 = "nn.broadcast_to"(%x) : (tensor<2x3x4xf32>) -> tensor<5x2x3x4xf32>
  %3 = "nn.concat"(%x, %x) {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  %4 = "nn.slice"(%x) {starts = array<i64: 1, 0, 1>, limits = array<i64: 2, 3, 4>, strides = array<i64: 1, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<1x2x2xf32>
  %5 = "nn.pad"(%x) {low = array<i64: 0, 1, 0>, high = array<i64: 0, 0, 3>, value = -1.0 : f32} : (tensor<2x3x4xf32>) -> tensor<2x4x7xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<5x2x3x4xf32>, tensor<2x6x4xf32>, tensor<1x2x2xf32>, tensor<2x4x7xf32>
}

// -----

// Reshapes that are not groupings of each other go through the flat vector.

// CHECK-LABEL: func.func @reshape_regroup
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: return %[[Y]]
func.func @reshape_regroup(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Ops of other dialects are left alone.

// CHECK-LABEL: func.func @no_nn_ops
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.
// CHECK: return
func.func @no_nn_ops(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}

// -----

// A fusion group becomes a call of its body, lowered too, marked with the
// group's kind (nn-inline-fused inlines it).

// CHECK-LABEL: func.func @fusion_group
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.+]]:2 = call @fusion_0(%[[X]], %[[Y]]) {lamina.fusion_kind = "elementwise"} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: return %[[R]]#1, %[[R]]#0
// CHECK: func.func private @fusion_0
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: "nn.
func.func @fusion_group(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "nn.fused"(%x, %y) {body = @fusion_0, kind = "elementwise"}
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#1, %0#0 : tensor<4xf32>, tensor<4xf32>
}
func.func private @fusion_0(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "nn.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A channels-last depthwise convolution (one filter per channel) stays
// NHWC: its padding is on the rows and columns of the NHWC input, its
// [C, 1, KH, KW] filter is read as [KH, KW, C] (a constant one permuted
// now, an argument by a transpose), and its bias is added along the
// channels, the last dim.
// CHECK-LABEL: func.func @depthwise_nhwc
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: %[[PADDED:.+]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2], [3]] : tensor<8x1x3x3xf32> into tensor<8x3x3xf32>
// CHECK: %[[HWC:.+]] = linalg.transpose ins(%[[FLAT]] : tensor<8x3x3xf32>) outs(%{{.+}} : tensor<3x3x8xf32>) permutation = [1, 2, 0]
// CHECK: %[[Y:.+]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %[[HWC]] : tensor<1x10x12x8xf32>, tensor<3x3x8xf32>) outs(%{{.+}} : tensor<1x4x5x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %arg2 : tensor<1x4x5x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
func.func @depthwise_nhwc(%x: tensor<1x8x10x8xf32>, %w: tensor<8x1x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x4x5x8xf32> {
  %y = "nn.conv2d"(%x, %w, %b) {groups = 8 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x8x10x8xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<1x4x5x8xf32>
  return %y : tensor<1x4x5x8xf32>
}

// -----

// A constant filter is put in HWC order at compile time: element
// [c, 0, i, j] = 4 * c + 2 * i + j lands at [i, j, c].
// CHECK-LABEL: func.func @depthwise_nhwc_constant_filter
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[}}{{\[}}[0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]], {{\[}}[2.000000e+00, 6.000000e+00], [3.000000e+00, 7.000000e+00]]]> : tensor<2x2x2xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise_nhwc_constant_filter(%x: tensor<1x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[[[0.0, 1.0], [2.0, 3.0]]], [[[4.0, 5.0], [6.0, 7.0]]]]> : tensor<2x1x2x2xf32>
  %y = "nn.conv2d"(%x, %w) {groups = 2 : i64, layout = "NHWC"} : (tensor<1x3x3x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Two channels per group is no depthwise convolution: it is computed in
// NCHW between transposes.
// CHECK-LABEL: func.func @grouped_nhwc
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @grouped_nhwc(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x2x4xf32> {
  %y = "nn.conv2d"(%x, %w) {groups = 2 : i64, layout = "NHWC"} : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}
