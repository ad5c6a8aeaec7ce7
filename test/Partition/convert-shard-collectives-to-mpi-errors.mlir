// RUN: lamina-opt %s --verify-diagnostics --convert-shard-collectives-to-mpi

// MPI has no reductions on f16 or bf16: an error at the op.
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @g(shape = 2)
  func.func @half_sum(%x: tensor<8x8xf16>) -> tensor<4x8xf16> {
    // expected-error @+1 {{'shard.reduce_scatter' on f16 elements cannot run on MPI (reductions on: f32, f64, i32, i64)}}
    %0 = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 0 : tensor<8x8xf16> -> tensor<4x8xf16>
    return %0 : tensor<4x8xf16>
  }
}
