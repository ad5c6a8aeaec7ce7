// RUN: lamina-opt %s --split-input-file --cpu-request-c-interface | FileCheck %s

// CHECK-LABEL: func.func @entry
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @entry(%x: memref<4xf32>, %y: memref<4xf32>) {
  return
}

// -----

// CHECK-LABEL: func.func public @explicitly_public
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func public @explicitly_public() {
  return
}

// -----

// Private functions and declarations keep the plain calling convention.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: llvm.emit_c_interface
// CHECK-LABEL: func.func private @external
// CHECK-NOT: llvm.emit_c_interface
func.func private @helper(%x: memref<4xf32>) {
  return
}
func.func private @external(memref<4xf32>)

// -----

// Only the functions directly in the module are entry points.
// CHECK-LABEL: module @inner
// CHECK: func.func @nested
// CHECK-NOT: llvm.emit_c_interface
module {
  module @inner {
    func.func @nested() {
      return
    }
  }
}
