// RUN: lamina-opt %s --split-input-file --convert-shard-collectives-to-mpi | FileCheck %s

// An all-gather along axis 1: MPI gathers rank-major blocks, which are
// then moved into place along axis 1.
// CHECK-LABEL: func.func private @MPI_Allgather(!llvm.ptr, i32, i32, !llvm.ptr, i32, i32, i32) -> i32
// CHECK-LABEL: func.func @gather
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<2x8x4xf32>
// CHECK: call @MPI_Allgather
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: linalg.transpose ins(%[[T]] : tensor<2x8x4xf32>) {{.+}} permutation = [1, 0, 2]
// CHECK: tensor.collapse_shape {{.+}} {{\[\[}}0], [1, 2]] : tensor<8x2x4xf32> into tensor<8x8xf32>
// CHECK-NOT: shard.all_gather
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @gather(%x: tensor<8x4xf32>) -> tensor<8x8xf32> {
    %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @all_to_all
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose
// CHECK: call @MPI_Alltoall
// CHECK-NOT: shard.all_to_all
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @all_to_all(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
    %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x8xf32> -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}

// -----

// CHECK-LABEL: func.func @reduce_scatter
// CHECK: memref.alloc() : memref<4x8xf32>
// CHECK: call @MPI_Reduce_scatter_block
// CHECK-NOT: shard.reduce_scatter
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @reduce_scatter(%x: tensor<8x8xf32>) -> tensor<4x8xf32> {
    %0 = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}

// -----

// The all-reduce stays upstream's, on buffers, for convert-shard-to-mpi.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %[[B:.+]] = bufferization.to_buffer %{{.+}} read_only
// CHECK: %[[R:.+]] = shard.all_reduce %[[B]] on @g grid_axes = [0] : memref<4x8xf32> -> memref<4x8xf32>
// CHECK: bufferization.to_tensor %[[R]] restrict writable
// CHECK-NOT: func.call
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}

// -----

// Over one axis of a 2x2 grid: the ranks that share their position on the
// other axis split off a communicator, ranked by their position on this
// one; it is freed after the call.
// CHECK-LABEL: func.func @gather_over_columns
// CHECK: %[[POS:.+]] = shard.process_multi_index on @g2 axes = [0] : index
// CHECK: %[[KEY:.+]] = shard.process_multi_index on @g2 axes = [1] : index
// CHECK: %[[SLOT:.+]] = llvm.alloca %{{.+}} x i32
// CHECK: call @MPI_Comm_split(%{{.+}}, %{{.+}}, %{{.+}}, %[[SLOT]])
// CHECK: %[[COMM:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK: call @MPI_Allgather({{.+}}, %[[COMM]])
// CHECK: call @MPI_Comm_free(%[[SLOT]])
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g2(shape = 2x2)
  func.func @gather_over_columns(%x: tensor<4x4xf32>) -> tensor<4x8xf32> {
    %0 = shard.all_gather %x on @g2 grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
