// --tune=SECONDS: lamina-run and lamina-compile search faster schedules on
// random inputs (the default first), print what they measured and chose,
// and keep the choices in the tuning cache that later compiles consult.
// RUN: rm -rf %t.cache
// RUN: env LAMINA_CACHE_DIR=%t.cache lamina-run %s --random --check -q --tune=2 2>&1 | FileCheck %s
// RUN: ls %t.cache/tuning | FileCheck %s --check-prefix=ENTRY
// RUN: env LAMINA_CACHE_DIR=%t.cache lamina-compile %s --tune=1 --emit=schedule 2>&1 | FileCheck %s --check-prefix=SCHEDULE

// CHECK: tuned 1 group(s) in {{.*}} s: {{.*}} ms, default {{.*}} ms
// CHECK: main_fusion_0: {{[0-9]+}} candidate(s), chose {{.*}}: {{[0-9.]+}} ms
// CHECK: check: all results match the reference

// ENTRY: {{^[0-9a-f]{64}\.json$}}

// SCHEDULE: tuned 1 group(s)
// SCHEDULE: linalg.matmul {{.*}}lamina.schedule = "main_fusion_0/1"
// SCHEDULE: transform.named_sequence @schedule_main_fusion_0_contraction

func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>)
    -> tensor<64x64xf32> {
  %h = "nn.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %hb = "nn.add"(%h, %b) : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %r = "nn.relu"(%hb) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
