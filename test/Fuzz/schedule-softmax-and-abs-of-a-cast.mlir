// Found by lamina-fuzz (--program 2000018), reduced: a cast whose result feeds
// a softmax and an elementwise op, both results. The CPU schedule failed to
// apply, like schedule-concat-of-a-shared-value.mlir ("requires exactly one
// containing_op handle (got 0)"); 334 of 10,000 programs of seed 2 failed so.
// The root is now the result that the most members feed (the softmax's
// division), with the softmax fused into its loop; the abs is alone.
// RUN: lamina-compile %s --emit=schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-run %s --random --seed 0 --check -q | FileCheck %s
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0_0
// SCHEDULE-NEXT: match attributes {lamina.schedule = "main_fusion_0/7"}
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0(
// SCHEDULE-NEXT: match attributes {lamina.schedule = "main_fusion_0/6"}
// SCHEDULE-COUNT-6: fuse_into_containing_op
// SCHEDULE-NOT: fuse_into_containing_op
// SCHEDULE: @__transform_main
// CHECK: check res0 {{.*}}: ok
// CHECK: check res1 {{.*}}: ok
// CHECK: check: all results match the reference
func.func @main(%x: tensor<2x1xbf16>) -> (tensor<2x1xf32>, tensor<2x1xf32>) {
  %0 = "nn.cast"(%x) : (tensor<2x1xbf16>) -> tensor<2x1xf32>
  %1 = "nn.softmax"(%0) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %2 = "nn.abs"(%0) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  return %1, %2 : tensor<2x1xf32>, tensor<2x1xf32>
}
