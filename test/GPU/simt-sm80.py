# RUN: %PYTHON %s | FileCheck %s
#
# The sm_80 kernels Lamina generates, run thread by thread: the `gpu` stage
# of the CUDA pipeline (each hw op distributed over threads and warps) is
# interpreted for every block of its launches with warp-level ldmatrix and
# mma.sync as the PTX ISA defines their fragments (Inputs/simt.py), and the
# results are compared with NumPy. This checks the distribution of the
# block-collective ops (chunks, predication, stages, fragments, epilogues)
# without a GPU.

import math
import os
import sys

import numpy as np

import lamina
from lamina.targets import get_target
from lamina.types import numpy_dtype

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import simt  # noqa: E402

TARGET = get_target("cuda:sm_80")
RNG = np.random.default_rng(5)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def gpu_stage(text: str):
    module = lamina.parse(text)
    return TARGET.emit(module, "gpu")


def compare(got, want, rtol):
    got, want = got.astype(np.float32), want.astype(np.float32)
    error = np.abs(got - want).max()
    scale = max(np.abs(want).max(), 1.0)
    print(f"{'matches' if error <= rtol * scale else 'DIFFERS'} "
          f"(max abs error {error:.3g}, {got.size} elements)")


MATMUL = """
func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>, %bias: tensor<{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %0 = "nn.matmul"(%a, %b) : (tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  %1 = "nn.add"(%0, %bias) : (tensor<{m}x{n}x{t}>, tensor<{n}x{t}>) -> tensor<{m}x{n}x{t}>
  %2 = "nn.relu"(%1) : (tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  return %2 : tensor<{m}x{n}x{t}>
}}
"""


def matmul_bias_relu(m, n, k, t):
    dtype = numpy_dtype(t)
    a, b = RNG.uniform(-1, 1, (m, k)).astype(dtype), RNG.uniform(-1, 1, (k, n)).astype(dtype)
    bias = RNG.uniform(-1, 1, n).astype(dtype)
    out = np.zeros((m, n), dtype)
    simt.launch(gpu_stage(MATMUL.format(m=m, n=n, k=k, t=t)), [a, b, bias, out])
    f = lambda x: x.astype(np.float32)  # noqa: E731
    compare(out, np.maximum(f(a) @ f(b) + f(bias), 0).astype(dtype), 1e-2)


# The nn matmul + bias + relu: a 4-stage cp.async pipeline on 64x64 tiles
# that do not divide 200 x 136 (f16); synchronous copies where K = 17 rows
# are too narrow for cp.async (bf16). The tiles are stored two columns at
# a time (the interpreter checks each vector store's alignment), but with
# an odd N (75) element by element.
# CHECK-LABEL: TEST: nn_matmul
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def nn_matmul():
    matmul_bias_relu(200, 136, 200, "f16")
    matmul_bias_relu(70, 40, 17, "bf16")
    matmul_bias_relu(72, 75, 40, "f16")


RESIDUAL_CAST = """
func.func @main(%a: tensor<72x40xbf16>, %b: tensor<40x104xbf16>, %r: tensor<72x104xbf16>) -> tensor<72x104xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<72x40xbf16>, tensor<40x104xbf16>) -> tensor<72x104xbf16>
  %1 = "nn.add"(%0, %r) : (tensor<72x104xbf16>, tensor<72x104xbf16>) -> tensor<72x104xbf16>
  %2 = "nn.relu"(%1) : (tensor<72x104xbf16>) -> tensor<72x104xbf16>
  %3 = "nn.cast"(%2) : (tensor<72x104xbf16>) -> tensor<72x104xf32>
  return %3 : tensor<72x104xf32>
}
"""


# A residual (an M x N extra, read two columns at a time) and a cast to
# f32 (stored as pairs of f32).
# CHECK-LABEL: TEST: residual_cast
# CHECK-NEXT: matches
@run
def residual_cast():
    bf16 = numpy_dtype("bf16")
    a, b = RNG.uniform(-1, 1, (72, 40)).astype(bf16), RNG.uniform(-1, 1, (40, 104)).astype(bf16)
    r = RNG.uniform(-1, 1, (72, 104)).astype(bf16)
    out = np.zeros((72, 104), np.float32)
    simt.launch(gpu_stage(RESIDUAL_CAST), [a, b, r, out])
    f = lambda x: x.astype(np.float32)  # noqa: E731
    want = np.maximum(f((f(a) @ f(b)).astype(bf16)) + f(r), 0).astype(bf16)
    compare(out, f(want), 1e-2)


BATCHED_GELU = """
func.func @main(%a: tensor<2x40x48xf16>, %b: tensor<2x48x72xf16>, %bias: tensor<72xf16>) -> tensor<2x40x72xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x40x48xf16>, tensor<2x48x72xf16>) -> tensor<2x40x72xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<2x40x72xf16>, tensor<72xf16>) -> tensor<2x40x72xf16>
  %2 = "nn.gelu"(%1) : (tensor<2x40x72xf16>) -> tensor<2x40x72xf16>
  return %2 : tensor<2x40x72xf16>
}
"""


# A batched matmul (the batch along the grid's z) with a bias and the exact
# gelu, whose erf the epilogue computes as a rational function.
# CHECK-LABEL: TEST: batched_gelu
# CHECK-NEXT: matches
@run
def batched_gelu():
    a, b = RNG.uniform(-1, 1, (2, 40, 48)).astype(np.float16), RNG.uniform(
        -1, 1, (2, 48, 72)).astype(np.float16)
    bias = RNG.uniform(-1, 1, 72).astype(np.float16)
    out = np.zeros((2, 40, 72), np.float16)
    simt.launch(gpu_stage(BATCHED_GELU), [a, b, bias, out])
    z = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    erf = np.vectorize(math.erf)
    compare(out, (0.5 * z * (1 + erf(z / math.sqrt(2)))).astype(np.float16), 1e-2)


HAND_WRITTEN = open(os.path.join(os.path.dirname(__file__), "ptx-sm80.mlir")).read()


# The hand-written kernels of ptx-sm80.mlir: a three-stage f16 pipeline on
# 128x128 tiles, bf16 with synchronous copies, tf32 with a register relu.
# CHECK-LABEL: TEST: hand_written
# CHECK-NEXT: f16_pipelined: matches
# CHECK-NEXT: bf16_sync: matches
# CHECK-NEXT: tf32_relu: matches
@run
def hand_written():
    f16, bf16 = np.float16, numpy_dtype("bf16")
    a, b = RNG.uniform(-1, 1, (256, 128)).astype(f16), RNG.uniform(-1, 1, (128, 256)).astype(f16)
    ab, bb = RNG.uniform(-1, 1, (64, 64)).astype(bf16), RNG.uniform(-1, 1, (64, 64)).astype(bf16)
    at, bt = RNG.uniform(-1, 1, (64, 32)).astype(np.float32), RNG.uniform(-1, 1, (32, 64)).astype(
        np.float32)
    c, cb, ct = (np.zeros((256, 256), np.float32), np.zeros((64, 64), np.float32),
                 RNG.uniform(-1, 1, (64, 64)).astype(np.float32))
    ct_in = ct.copy()
    simt.launch(gpu_stage(HAND_WRITTEN), [a, b, c, ab, bb, cb, at, bt, ct])
    f = lambda x: x.astype(np.float32)  # noqa: E731
    print("f16_pipelined: ", end="")
    compare(c, f(a) @ f(b), 1e-5)
    print("bf16_sync: ", end="")
    compare(cb, f(ab) @ f(bb), 1e-5)
    print("tf32_relu: ", end="")
    compare(ct, np.maximum(simt._tf32(at) @ simt._tf32(bt) + ct_in, 0), 1e-5)
