// RUN: lamina-opt %s --gpu-extern-dynamic-shared-memory=alignment=1024 | FileCheck %s
// RUN: not lamina-opt %s --gpu-extern-dynamic-shared-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ERROR

// The zero-length shared global that upstream's lowering of
// gpu.dynamic_shared_memory makes becomes an external declaration aligned
// as asked (NVPTX then prints `.extern .shared .align 1024 .b8 name[]`);
// a static shared tile, a zero-length global of another address space and
// a larger alignment are left alone.

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global external @wider() {addr_space = 3 : i32, alignment = 2048 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @global_memory() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// ERROR: error: alignment=48 is not a power of two

module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @wider() {addr_space = 3 : i32, alignment = 2048 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
    llvm.mlir.global internal @global_memory() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  }
}
