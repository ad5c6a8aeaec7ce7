// lamina-run JIT-compiles and runs a function on random or given inputs,
// checks it against the NumPy reference and writes its results.
// RUN: lamina-run %s --random --check | FileCheck %s
// RUN: lamina-run %s --random --seed 7 --check -q | FileCheck %s --check-prefix=QUIET
// RUN: %PYTHON -c "import numpy as np; np.savez('%t.in.npz', arg0=np.arange(6, dtype=np.float32).reshape(2, 3) - 3, arg1=np.array([1, 0, -1], np.float32))"
// RUN: lamina-run %s --inputs %t.in.npz --output %t.out.npz | FileCheck %s --check-prefix=GIVEN
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.out.npz'); print(r.files, r['res0'].tolist(), r['res1'].tolist())" | FileCheck %s --check-prefix=SAVED
// RUN: %PYTHON -c "import numpy as np; np.save('%t.a.npy', np.ones((2, 3), np.float32)); np.save('%t.b.npy', np.ones(3, np.float32))"
// RUN: lamina-run %s --inputs %t.a.npy,%t.b.npy --check | FileCheck %s --check-prefix=NPY
// RUN: lamina-run %s --entry scale --random --check | FileCheck %s --check-prefix=ENTRY
// RUN: lamina-run %s --random --bench -q | FileCheck %s --check-prefix=BENCH

// CHECK: res0: tensor<2x3xf32> =
// CHECK: res1: tensor<2xf32> =
// CHECK: check res0 (tensor<2x3xf32>): max abs error {{.*}}: ok
// CHECK: check res1 (tensor<2xf32>): max abs error {{.*}}: ok
// CHECK: check: all results match the reference

// QUIET-NOT: res0: tensor
// QUIET: check: all results match the reference

// GIVEN: res0: tensor<2x3xf32> =
// GIVEN-NEXT: {{\[\[}}0. 0. 0.]
// GIVEN-NEXT:  [1. 1. 1.]]
// GIVEN: res1: tensor<2xf32> =
// GIVEN-NEXT: [0. 3.]

// SAVED: ['res0', 'res1'] {{\[\[}}0.0, 0.0, 0.0], [1.0, 1.0, 1.0]] [0.0, 3.0]

// NPY: [2. 2. 2.]
// NPY: check: all results match the reference

// ENTRY: res0: tensor<4xf32> =
// ENTRY: check: all results match the reference

// BENCH: compile: {{[0-9.]+}} ms
// BENCH: run: median {{[0-9.e+-]+}} ms, min {{[0-9.e+-]+}} ms over {{[0-9]+}} runs

func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %0 = "nn.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "nn.relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "nn.reduce_sum"(%1) {axes = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %1, %2 : tensor<2x3xf32>, tensor<2xf32>
}

func.func @scale(%a: tensor<4xf32>) -> tensor<4xf32> {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %0 = "nn.mul"(%a, %two) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
