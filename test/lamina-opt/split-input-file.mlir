// --split-input-file treats each `// -----` chunk as its own module; outputs
// are joined by `// -----` (each module followed by a blank line, as
// mlir-opt prints them), and errors keep the line numbers of the file.
// RUN: lamina-opt %s --split-input-file | FileCheck %s
// The flag takes no separate value: the file name after it is the input.
// RUN: lamina-opt --split-input-file %s | FileCheck %s
// RUN: lamina-opt --split-input-file - < %s | FileCheck %s
// Without the flag, the three functions are one module, where @first is
// defined twice.
// RUN: not lamina-opt %s 2>&1 | FileCheck %s --check-prefix=WHOLE
// A bad chunk fails the run; every chunk's error is reported at its line.
// RUN: not lamina-opt --split-input-file %S/Inputs/split-errors.mlir 2>&1 | FileCheck %s --check-prefix=ERRORS -DFILE=%S/Inputs/split-errors.mlir

// CHECK: module {
// CHECK-NEXT: func.func @first
// CHECK: {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @second
// CHECK: {{^}}}
// CHECK-EMPTY:
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @first
// CHECK: {{^}}}
// CHECK-EMPTY:
// CHECK-NOT: {{.}}

// WHOLE: split-input-file.mlir:52:1: error: redefinition of symbol named 'first'
// WHOLE-NEXT: split-input-file.mlir:37:1: note: see existing symbol definition here

// ERRORS: [[FILE]]:4:8: error: 'nn.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
// ERRORS-NEXT: [[FILE]]:17:3: error: {{.*}}custom op 'nn.foo'
// ERRORS-NOT: error

func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Symbol names are per chunk, so a name may repeat.
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
