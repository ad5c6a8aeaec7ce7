// --verify-diagnostics: every diagnostic must be expected by an
// `expected-error` comment on its line (same line, @+N, @-N, @above, @below;
// `-re` for regex pieces in {{...}}), and every expectation must be met.
// RUN: lamina-opt %s --split-input-file --verify-diagnostics
// Without the flag the same file fails, and says why, at the op.
// RUN: not lamina-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=PLAIN
// Unmet expectations and unexpected errors make it fail, each reported.
// RUN: not lamina-opt %S/Inputs/verify-diagnostics-failures.mlir --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=FAIL -DFILE=%S/Inputs/verify-diagnostics-failures.mlir

// PLAIN: verify-diagnostics.mlir:[[@LINE+3]]:8: error: 'nn.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
func.func @next_line(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type tensor<5xf32> does not match the inferred type tensor<4xf32>}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @same_line(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32> // expected-error {{does not match the inferred type}}
  return
}

// -----

func.func @offset_and_above_below(%x: tensor<4xf32>) {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<3xf32>
  // expected-error @-1 {{'nn.exp' op result type tensor<3xf32>}}
  %1 = "nn.log"(%x) : (tensor<4xf32>) -> tensor<2xf32>
  // expected-error @above {{'nn.log' op result type tensor<2xf32>}}
  // expected-error @below {{'nn.tanh' op result type tensor<1xf32>}}
  %2 = "nn.tanh"(%x) : (tensor<4xf32>) -> tensor<1xf32>
  // expected-error @+2 {{'nn.neg' op}}
  // A comment between the expectation and the op.
  %3 = "nn.neg"(%x) : (tensor<4xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @regex(%x: tensor<2x3xf32>) {
  // expected-error-re @+1 {{'perm' [{{[0-9, ]+}}] is not a permutation of the {{[0-9]+}} dims}}
  %0 = "nn.transpose"(%x) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

// Parse errors are diagnostics too, at their own line.
func.func @parse_error(%x: tensor<4xf32>) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %0 = "nn.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// A chunk without errors needs no expectation.
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// FAIL-DAG: [[FILE]]:3:1: error: expected error "this error never happens" was not produced
// FAIL-DAG: [[FILE]]:12:8: error: unexpected error: 'nn.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
// FAIL-DAG: [[FILE]]:20:8: error: unexpected error: 'nn.exp' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
// FAIL-DAG: [[FILE]]:19:1: error: expected error "a different message" was not produced
// FAIL-DAG: [[FILE]]:28:8: error: unexpected error: 'nn.log' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
// FAIL-DAG: [[FILE]]:27:1: error: expected error "'nn.log' op result type" was not produced
// FAIL-NOT: error:
