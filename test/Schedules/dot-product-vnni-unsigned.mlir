// A ui8 x i8 matmul is vpdpbusd's own form: the dot-product schedule takes
// its contraction as it is, with no +128 shift of the activations and no
// column-sum compensation (no -128 constant, no sum of B); without VNNI
// the widening path computes the same generic.
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=asm | FileCheck %s
// RUN: lamina-compile %s --target=cpu:haswell --emit=asm | FileCheck %s --check-prefix=NOVNNI

// SCHEDULE-NOT: -128
// SCHEDULE: arith.extui %{{.+}} : i8 to i32
// SCHEDULE: arith.extsi %{{.+}} : i8 to i32
// SCHEDULE-NOT: -128
// SCHEDULE: transform.named_sequence @schedule_main_op0_dot_product
// SCHEDULE: transform.structured.pack %{{.+}} packed_sizes = [0, 16, 4]

// CHECK: vpbroadcastd
// CHECK: vpdpbusd %zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// NOVNNI-NOT: vpdpbusd
func.func @main(%a: tensor<64x96xui8>, %b: tensor<96x64xi8>) -> tensor<64x64xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<64x96xui8>, tensor<96x64xi8>) -> tensor<64x64xi32>
  return %c : tensor<64x64xi32>
}
