// Passes run in command-line order, as flags or as pipelines; pipelines nest
// (`func.func(...)`) and take options (`{key=value}`); flags and pipelines mix.
// RUN: lamina-opt %s | FileCheck %s --check-prefix=NONE
// RUN: lamina-opt %s --cse | FileCheck %s --check-prefix=CSE
// RUN: lamina-opt %s --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: lamina-opt %s --cse --canonicalize | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s -p 'builtin.module(func.func(cse),canonicalize)' | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s --pass-pipeline='builtin.module(func.func(cse), canonicalize)' | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s -p 'builtin.module(func.func(cse))' --canonicalize | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s --cse -p 'builtin.module(canonicalize{max-iterations=3 region-simplify=disabled})' | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s --canonicalize='max-iterations=3' --cse | FileCheck %s --check-prefix=BOTH
// RUN: lamina-opt %s '--canonicalize={max-iterations=3}' --cse | FileCheck %s --check-prefix=BOTH

// Order is kept: print-ir (upstream, to stderr) sees the IR between the passes.
// RUN: lamina-opt %s --cse -p 'builtin.module(func.func(print-ir{label=between}))' --canonicalize 2>&1 >/dev/null | FileCheck %s --check-prefix=ORDER
// RUN: lamina-opt %s -p 'builtin.module(func.func(print-ir{label=first}, cse, print-ir{label=second}))' 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED

// Lamina's and upstream passes mix in one pipeline.
// RUN: lamina-opt %s -p 'builtin.module(func.func(nn-canonicalize, cse), canonicalize)' | FileCheck %s --check-prefix=BOTH

// NONE-LABEL: func.func @redundant
// NONE-COUNT-2: arith.addf
// NONE-COUNT-2: arith.mulf
// NONE: "nn.relu"

// CANON-LABEL: func.func @redundant
// CANON-COUNT-2: arith.addf
// CANON: arith.mulf
// CANON-NOT: arith.mulf
// CANON: return

// CSE-LABEL: func.func @redundant
// CSE: %[[S:.+]] = arith.addf
// CSE-NOT: arith.addf
// CSE: %[[M:.+]] = arith.mulf %[[S]], %[[S]]
// CSE: arith.mulf %[[M]], %{{.+}}

// The multiplication by one folds away; CSE made both addf one.
// BOTH-LABEL: func.func @redundant
// BOTH-SAME: (%[[A:[^:]+]]: f32
// BOTH-NOT: arith.constant
// BOTH: %[[S:.+]] = arith.addf %[[A]], %[[A]] : f32
// BOTH-NOT: arith.addf
// BOTH: %[[M:.+]] = arith.mulf %[[S]], %[[S]] : f32
// BOTH-NOT: arith.mulf
// BOTH: %[[R:.+]] = "nn.relu"
// BOTH: return %[[M]], %[[R]]

// ORDER: // -----// IR Dump between //----- //
// ORDER: arith.addf
// ORDER-NOT: arith.addf
// ORDER-COUNT-2: arith.mulf

// NESTED: // -----// IR Dump first //----- //
// NESTED-COUNT-2: arith.addf
// NESTED: // -----// IR Dump second //----- //
// NESTED: arith.addf
// NESTED-NOT: arith.addf
// NESTED: arith.mulf
func.func @redundant(%a: f32, %x: tensor<4xf32>) -> (f32, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  %3 = arith.mulf %2, %one : f32
  %r = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %3, %r : f32, tensor<4xf32>
}
