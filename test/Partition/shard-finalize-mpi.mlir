// RUN: lamina-opt %s --split-input-file --shard-finalize-mpi | FileCheck %s

// The buffer upstream's lowering of an all-reduce allocates is freed after
// its last use; the grid goes.
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @all_reduce_result
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: mpi.allreduce
// CHECK: memref.copy %[[BUF]], %arg1
// CHECK-NEXT: memref.dealloc %[[BUF]]
// CHECK-NEXT: return
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @all_reduce_result(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>) {
    %alloc = memref.alloc() : memref<4x8xf32>
    memref.copy %arg0, %alloc : memref<4x8xf32> to memref<4x8xf32>
    %comm = mpi.comm_world : !mpi.comm
    %flat = memref.collapse_shape %alloc [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    mpi.allreduce(%flat, %flat, MPI_SUM, %comm) : memref<32xf32>, memref<32xf32>
    memref.copy %alloc, %arg1 : memref<4x8xf32> to memref<4x8xf32>
    return
  }
}

// -----

// Buffers no MPI op uses are not touched.
// CHECK-LABEL: func.func @no_mpi
// CHECK-NOT: memref.dealloc
module {
  shard.grid @g(shape = 2)
  func.func @no_mpi(%arg0: memref<4xf32>) {
    %alloc = memref.alloc() : memref<4xf32>
    memref.copy %arg0, %alloc : memref<4xf32> to memref<4xf32>
    return
  }
}
