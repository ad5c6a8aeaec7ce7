// RUN: lamina-opt --load-plugin=%S/Inputs/plugtest.py --dump-irdl -o %t.irdl.mlir
// RUN: FileCheck %s --check-prefix=IRDL < %t.irdl.mlir
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %S/round-trip.mlir | FileCheck %s
// RUN: not mlir-opt --irdl-file=%t.irdl.mlir --split-input-file %s 2>&1 | FileCheck %s --check-prefix=KIND

// The IRDL export of a plugin's dialect: upstream mlir-opt parses its ops
// and rejects an operand, a result or an attribute of the wrong kind.

// IRDL: irdl.dialect @nn {
// IRDL-LABEL: irdl.dialect @plugtest {
// IRDL: irdl.type @token
// IRDL: irdl.operation @fill_shared {
// IRDL-NEXT: %[[T:.+]] = irdl.base "!builtin.memref"
// IRDL-NEXT: irdl.operands(tile: %[[T]])
// IRDL-NOT: irdl.results
// IRDL: irdl.operation @split {
// IRDL: %[[D:.+]] = irdl.base @plugtest::@token
// IRDL: irdl.results(low: %{{.+}}, high: %{{.+}}, done: %[[D]])
// IRDL: irdl.operation @invoke {
// IRDL: %[[C:.+]] = irdl.base "#builtin.symbol_ref"
// IRDL: irdl.operands(args_head: %{{.+}}, args: variadic %{{.+}})
// IRDL: irdl.results(outs: variadic %{{.+}})
// IRDL: irdl.attributes {"callee" = %[[C]]}

// CHECK-LABEL: func.func @fill
// CHECK: "plugtest.fill_shared"

// KIND: irdl.mlir:[[@LINE+2]]:3: error: expected base type 'builtin.memref' but got 'builtin.tensor'
func.func @fill_a_tensor(%t: tensor<16x16xf16>) {
  "plugtest.fill_shared"(%t) : (tensor<16x16xf16>) -> ()
  return
}

// -----

// KIND: irdl.mlir:[[@LINE+2]]:21: error: expected base type 'plugtest.token' but got 'builtin.index'
func.func @split_token_is_index(%x: tensor<2x8xf32>) -> index {
  %lo, %hi, %done = "plugtest.split"(%x) : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, index)
  return %done : index
}

// -----

// KIND: irdl.mlir:[[@LINE+2]]:8: error: expected base attribute 'builtin.symbol_ref' but got 'builtin.string'
func.func @callee_is_a_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "plugtest.invoke"(%x) {callee = "kernel"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
