// RUN: lamina-opt %s --split-input-file --cpu-approximate-math | FileCheck %s

// The polynomials keep the vector shape, a scalable one too (SVE's
// vector-length agnostic code): exp's exponent is an integer vector of the
// same scalable shape.
// CHECK-LABEL: func.func @exp_scalable
// CHECK-NOT: math.exp
// CHECK: math.roundeven %{{.+}} : vector<[4]xf32>
// CHECK: arith.fptosi %{{.+}} : vector<[4]xf32> to vector<[4]xi32>
// CHECK: arith.shli %{{.+}} : vector<[4]xi32>
func.func @exp_scalable(%x: vector<[4]xf32>) -> vector<[4]xf32> {
  %0 = math.exp %x : vector<[4]xf32>
  return %0 : vector<[4]xf32>
}

// -----

// CHECK-LABEL: func.func @exp_fixed
// CHECK: arith.fptosi %{{.+}} : vector<2x8xf32> to vector<2x8xi32>
func.func @exp_fixed(%x: vector<2x8xf32>) -> vector<2x8xf32> {
  %0 = math.exp %x : vector<2x8xf32>
  return %0 : vector<2x8xf32>
}

// -----

// Scalars are left to libm.
// CHECK-LABEL: func.func @exp_scalar
// CHECK: math.exp %{{.+}} : f32
func.func @exp_scalar(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}
