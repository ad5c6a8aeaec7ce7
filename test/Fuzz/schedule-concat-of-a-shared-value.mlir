// Found by lamina-fuzz (--program 25, 1000009, 1000027, 1000043), reduced: a
// value used by an elementwise op that is a result and, directly and through
// another elementwise op, by a concat. The CPU schedule failed to apply:
// "requires exactly one containing_op handle (got 0)" in cpu-apply-schedule.
// The group's root (the abs) was split over threads and the sqrt, which
// does not feed it, fused into its loop; only members that feed the root
// fuse into it now, the others get loop nests of their own.
// RUN: lamina-compile %s --emit=schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-run %s --random --seed 0 --check -q | FileCheck %s
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0_0
// SCHEDULE-NEXT: match attributes {lamina.schedule = "main_fusion_0/1"}
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0(
// SCHEDULE-NEXT: match attributes {lamina.schedule = "main_fusion_0/2"}
// SCHEDULE-NOT: "main_fusion_0/1"
// SCHEDULE: fuse_into_containing_op
// SCHEDULE-NOT: fuse_into_containing_op
// SCHEDULE: @__transform_main
// CHECK: check res0 {{.*}}: ok
// CHECK: check res1 {{.*}}: ok
// CHECK: check: all results match the reference
func.func @main(%x: tensor<2xf32>, %y: tensor<f32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %v = "nn.add"(%x, %y) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %s = "nn.sqrt"(%v) : (tensor<2xf32>) -> tensor<2xf32>
  %a = "nn.abs"(%v) : (tensor<2xf32>) -> tensor<2xf32>
  %c = "nn.concat"(%a, %v) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %c, %s : tensor<4xf32>, tensor<2xf32>
}
