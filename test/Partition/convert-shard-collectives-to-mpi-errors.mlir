// RUN: lamina-opt %s --verify-diagnostics --convert-shard-collectives-to-mpi

// Collectives over some axes of a grid are not lowered yet: an error at the op.
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g2(shape = 2x2)
  func.func @some_axes(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
    // expected-error @+1 {{'shard.all_gather' over axes [0] of grid @g2 (shape [2, 2]) cannot run on MPI yet: collectives over all axes of their grid only}}
    %0 = shard.all_gather %x on @g2 grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
