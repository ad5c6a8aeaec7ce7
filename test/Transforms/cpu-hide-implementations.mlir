// RUN: lamina-opt %s --split-input-file --cpu-hide-implementations | FileCheck %s

// The kernel becomes internal; its C interface stays external.
// CHECK-LABEL: llvm.func internal @main(
// CHECK-LABEL: llvm.func @_mlir_ciface_main(
// CHECK: llvm.call @main(
llvm.func @main(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: i64, %arg8: i64, %arg9: i64) attributes {llvm.emit_c_interface} {
  %0 = llvm.load %arg1 {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
  %1 = llvm.intr.exp(%0) : (vector<4xf32>) -> vector<4xf32>
  llvm.store %1, %arg6 {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}
llvm.func @_mlir_ciface_main(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {llvm.emit_c_interface} {
  %0 = llvm.load %arg0 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %1 = llvm.extractvalue %0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %2 = llvm.extractvalue %0[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = llvm.extractvalue %0[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %4 = llvm.extractvalue %0[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %5 = llvm.extractvalue %0[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %6 = llvm.load %arg1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %7 = llvm.extractvalue %6[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %8 = llvm.extractvalue %6[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %9 = llvm.extractvalue %6[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %10 = llvm.extractvalue %6[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %11 = llvm.extractvalue %6[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  llvm.call @main(%1, %2, %3, %4, %5, %7, %8, %9, %10, %11) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  llvm.return
}

// -----

// Every defined function but a C interface is hidden, whether or not it has
// one; declarations of runtime and libm functions stay external.
// CHECK-LABEL: llvm.func @expf(f32) -> f32
// CHECK-LABEL: llvm.func @free(!llvm.ptr)
// CHECK-LABEL: llvm.func internal @helper(
// CHECK: llvm.call @expf(
// CHECK: llvm.call @free(
llvm.func @expf(f32) -> f32
llvm.func @free(!llvm.ptr)
llvm.func @helper(%x: f32, %p: !llvm.ptr) -> f32 {
  %0 = llvm.call @expf(%x) : (f32) -> f32
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return %0 : f32
}
