/* Runs one rank's partition of a Megatron MLP compiled by
 * `lamina-compile --emit=obj` and checks rank 0's result against the
 * whole computation in C.
 *
 * Program: y = relu(x w1) w2 with x: 4x8, w1: 8x16 split by columns,
 * w2: 16x8 split by rows over 2 ranks; y (4x8) is all-reduced, so every
 * rank holds it. The object calls MPI; this program initialises it. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

typedef struct { float *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref_2d_f32;

void _mlir_ciface_main(memref_2d_f32 *x, memref_2d_f32 *w1, memref_2d_f32 *w2,
                       memref_2d_f32 *y);

static memref_2d_f32 view(float *data, int64_t rows, int64_t cols) {
  memref_2d_f32 m = {data, data, 0, {rows, cols}, {cols, 1}};
  return m;
}

static float x_at(int i, int k) { return 0.25f * (float)((i * 8 + k) % 9) - 1.0f; }
static float w1_at(int k, int j) { return 0.125f * (float)((k * 16 + j) % 11) - 0.5f; }
static float w2_at(int j, int n) { return 0.0625f * (float)((j * 8 + n) % 13) - 0.375f; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  float x[4][8], w1[8][8], w2[8][8], y[4][8];
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 8; ++k) x[i][k] = x_at(i, k);
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 8; ++j) w1[k][j] = w1_at(k, rank * 8 + j);
  for (int j = 0; j < 8; ++j)
    for (int n = 0; n < 8; ++n) w2[j][n] = w2_at(rank * 8 + j, n);

  memref_2d_f32 mx = view(&x[0][0], 4, 8), mw1 = view(&w1[0][0], 8, 8);
  memref_2d_f32 mw2 = view(&w2[0][0], 8, 8), my = view(&y[0][0], 4, 8);
  _mlir_ciface_main(&mx, &mw1, &mw2, &my);

  if (rank == 0) {
    double worst = 0.0;
    for (int i = 0; i < 4; ++i)
      for (int n = 0; n < 8; ++n) {
        double expected = 0.0;
        for (int j = 0; j < 16; ++j) {
          double h = 0.0;
          for (int k = 0; k < 8; ++k) h += (double)x_at(i, k) * w1_at(k, j);
          expected += (h > 0.0 ? h : 0.0) * w2_at(j, n);
        }
        double error = fabs(expected - y[i][n]);
        if (error > worst) worst = error;
      }
    printf("%d ranks: max abs error %.3g: %s\n", size, worst, worst < 1e-4 ? "ok" : "FAILED");
  }
  MPI_Finalize();
  return 0;
}
