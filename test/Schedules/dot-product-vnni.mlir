// The integer matmul's instruction is chosen from the target model: CPUs
// with AVX512-VNNI compute the register tile with vpdpbusd, on B packed as
// [N/16, K/4, 16, 4] and A's groups of 4 bytes broadcast; without VNNI
// (the same CPU with the feature off, or an AVX2 one) the widening path
// stays.
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=asm | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5 --emit=asm | FileCheck %s
// RUN: lamina-compile %s --target=cpu:icelake-server --emit=asm | FileCheck %s
// RUN: lamina-compile %s --target=cpu:sapphirerapids,-avx512vnni --emit=asm | FileCheck %s --check-prefix=NOVNNI
// RUN: lamina-compile %s --target=cpu:haswell --emit=asm | FileCheck %s --check-prefix=NOVNNI

// SCHEDULE: transform.named_sequence @schedule_main_op3_dot_product
// SCHEDULE: transform.structured.pack %{{.+}} packed_sizes = [0, 16, 4]
// SCHEDULE: transform.structured.pack_transpose %{{.+}} outer_perm = [1, 0]
// SCHEDULE-NOT: transform.named_sequence @schedule_main_op3_contraction

// CHECK: vpbroadcastd
// CHECK: vpdpbusd %zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// NOVNNI-NOT: vpdpbusd
// NOVNNI: vpmulld
// NOVNNI-NOT: vpdpbusd
func.func @main(%a: tensor<64x96xi8>, %b: tensor<96x64xi8>) -> tensor<64x64xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<64x96xi8>, tensor<96x64xi8>) -> tensor<64x64xi32>
  return %c : tensor<64x64xi32>
}
