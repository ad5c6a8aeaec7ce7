/* Runs examples/mlp.mlir, compiled into a shared library, from C.
 *
 *   lamina-compile ../mlp.mlir --emit=shared -o model.so
 *   lamina-compile ../mlp.mlir --emit=header -o model.h
 *   cc -O2 main.c model.so -Wl,-rpath,'$ORIGIN' -o main && ./main
 *
 * (or `make run`; see README.md). The inputs are fixed: element i of
 * argument k is ((37 i + 11 k) mod 101) / 101 - 1/2, so that expected.py
 * computes the same ones and checks the printed probabilities against
 * NumPy. */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

static float *filled(size_t count, int k) {
  float *data = malloc(count * sizeof *data);
  if (!data) { fprintf(stderr, "out of memory\n"); exit(2); }
  for (size_t i = 0; i < count; ++i)
    data[i] = (float)((37 * i + 11 * (size_t)k) % 101) / 101.0f - 0.5f;
  return data;
}

int main(void) {
  float *x = filled(LAMINA_MAIN_ARG0_SIZE, 0);
  float *w1 = filled(LAMINA_MAIN_ARG1_SIZE, 1);
  float *b1 = filled(LAMINA_MAIN_ARG2_SIZE, 2);
  float *w2 = filled(LAMINA_MAIN_ARG3_SIZE, 3);
  float *b2 = filled(LAMINA_MAIN_ARG4_SIZE, 4);
  static float probabilities[LAMINA_MAIN_RESULT0_DIM0][LAMINA_MAIN_RESULT0_DIM1];

  if (lamina_main(x, w1, b1, w2, NULL, &probabilities[0][0]) != LAMINA_ERROR_NULL_POINTER) {
    fprintf(stderr, "a NULL argument was not refused\n");
    return 1;
  }
  int status = lamina_main(x, w1, b1, w2, b2, &probabilities[0][0]);
  if (status != LAMINA_OK) {
    fprintf(stderr, "lamina_main returned %d\n", status);
    return 1;
  }
  for (int row = 0; row < LAMINA_MAIN_RESULT0_DIM0; ++row) {
    int best = 0;
    printf("row %d:", row);
    for (int c = 0; c < LAMINA_MAIN_RESULT0_DIM1; ++c) {
      printf(" %.6f", probabilities[row][c]);
      if (probabilities[row][c] > probabilities[row][best]) best = c;
    }
    printf("  class %d\n", best);
  }
  free(x); free(w1); free(b1); free(w2); free(b2);
  return 0;
}
