/* Calls a kernel compiled by `lamina-compile --emit=obj` through its C
 * interface and checks it against the same computation in C.
 *
 * Kernel: probs = softmax(x w + b) along rows; sums = reduce_sum(relu(x w + b), 1)
 * with x: 2x3, w: 3x4, b: 4 (f32). Results are out-parameters. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* MLIR's memref descriptors (see lamina.targets.cpu). */
typedef struct { float *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref_2d_f32;
typedef struct { float *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref_1d_f32;

void _mlir_ciface_main(memref_2d_f32 *x, memref_2d_f32 *w, memref_1d_f32 *b,
                       memref_2d_f32 *probs, memref_1d_f32 *sums);

static memref_2d_f32 view_2d(float *data, int64_t rows, int64_t cols) {
  memref_2d_f32 m = {data, data, 0, {rows, cols}, {cols, 1}};
  return m;
}

static memref_1d_f32 view_1d(float *data, int64_t n) {
  memref_1d_f32 m = {data, data, 0, {n}, {1}};
  return m;
}

int main(void) {
  float x[2][3], w[3][4], b[4], probs[2][4], sums[2];
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k) x[i][k] = 0.25f * (float)(i * 3 + k) - 0.5f;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) w[k][j] = 0.125f * (float)((k * 4 + j) % 7) - 0.375f;
  for (int j = 0; j < 4; ++j) b[j] = 0.1f * (float)j;

  memref_2d_f32 mx = view_2d(&x[0][0], 2, 3), mw = view_2d(&w[0][0], 3, 4);
  memref_2d_f32 mprobs = view_2d(&probs[0][0], 2, 4);
  memref_1d_f32 mb = view_1d(b, 4), msums = view_1d(sums, 2);
  _mlir_ciface_main(&mx, &mw, &mb, &mprobs, &msums);

  double worst = 0.0;
  for (int i = 0; i < 2; ++i) {
    double z[4], largest = -INFINITY, total = 0.0, relu_sum = 0.0;
    for (int j = 0; j < 4; ++j) {
      z[j] = b[j];
      for (int k = 0; k < 3; ++k) z[j] += (double)x[i][k] * w[k][j];
      largest = z[j] > largest ? z[j] : largest;
      relu_sum += z[j] > 0 ? z[j] : 0;
    }
    for (int j = 0; j < 4; ++j) total += exp(z[j] - largest);
    for (int j = 0; j < 4; ++j)
      worst = fmax(worst, fabs(probs[i][j] - exp(z[j] - largest) / total));
    worst = fmax(worst, fabs(sums[i] - relu_sum));
    printf("row %d: probs %.4f %.4f %.4f %.4f, relu sum %.4f\n", i, probs[i][0], probs[i][1],
           probs[i][2], probs[i][3], sums[i]);
  }
  printf("max abs error %.2e: %s\n", worst, worst < 1e-5 ? "ok" : "MISMATCH");
  return worst < 1e-5 ? 0 : 1;
}
