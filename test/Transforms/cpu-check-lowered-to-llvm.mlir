// RUN: lamina-opt %s --split-input-file --verify-diagnostics --cpu-check-lowered-to-llvm | FileCheck %s

// A module fully in the LLVM dialect passes unchanged.
// CHECK-LABEL: llvm.func @lowered
// CHECK-NEXT: %[[V:.+]] = llvm.load %{{.+}} : !llvm.ptr -> vector<4xf32>
// CHECK-NEXT: llvm.store %[[V]], %{{.+}} : vector<4xf32>, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @lowered(%src: !llvm.ptr, %dst: !llvm.ptr) {
  %0 = llvm.load %src : !llvm.ptr -> vector<4xf32>
  llvm.store %0, %dst : vector<4xf32>, !llvm.ptr
  llvm.return
}

// -----

// A function left in the func dialect (no convert-to-llvm) is reported.
// expected-error @+1 {{'func.func' was not lowered to the LLVM dialect (no pass of the pipeline converts it)}}
func.func @not_converted(%x: memref<4xf32>) {
  return
}

// -----

// The op no pass converted is reported, not the conversion casts around it.
llvm.func @partly_lowered(%p: !llvm.ptr, %i: i64) -> f32 {
  %0 = builtin.unrealized_conversion_cast %p : !llvm.ptr to memref<4xf32>
  %1 = builtin.unrealized_conversion_cast %i : i64 to index
  // expected-error @+1 {{'memref.load' was not lowered to the LLVM dialect (no pass of the pipeline converts it)}}
  %2 = memref.load %0[%1] : memref<4xf32>
  llvm.return %2 : f32
}

// -----

// Conversion casts alone are reported too: translation cannot take them.
llvm.func @only_casts(%p: !llvm.ptr) -> !llvm.ptr {
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' was not lowered to the LLVM dialect}}
  %0 = builtin.unrealized_conversion_cast %p : !llvm.ptr to memref<4xf32>
  %1 = builtin.unrealized_conversion_cast %0 : memref<4xf32> to !llvm.ptr
  llvm.return %1 : !llvm.ptr
}
