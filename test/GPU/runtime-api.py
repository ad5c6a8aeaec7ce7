# REQUIRES: cuda-gpu, cuda-sm_90a
# RUN: %PYTHON %s | FileCheck %s
#
# The GPU runtime from Python: lamina.compile(module, target="cuda:ARCH")
# returns a callable on NumPy arrays whose kernels run through the CUDA
# driver; a prepared call (bind) runs repeatedly and is timed with CUDA
# events. On a Hopper GPU, the sm_90a kernels load as a cubin and the
# sm_80 ones as PTX that the driver compiles.

import numpy as np

import lamina

MATMUL = """
func.func @main(%a: tensor<130x200xf16>, %b: tensor<200x72xf16>, %bias: tensor<72xf16>) -> tensor<130x72xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<130x200xf16>, tensor<200x72xf16>) -> tensor<130x72xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<130x72xf16>, tensor<72xf16>) -> tensor<130x72xf16>
  return %1 : tensor<130x72xf16>
}
"""
RNG = np.random.default_rng(11)
A = RNG.uniform(-1, 1, (130, 200)).astype(np.float16)
B = RNG.uniform(-1, 1, (200, 72)).astype(np.float16)
BIAS = RNG.uniform(-1, 1, 72).astype(np.float16)
WANT = A.astype(np.float32) @ B.astype(np.float32) + BIAS.astype(np.float32)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


# CHECK-LABEL: TEST: compile_and_call
# CHECK: cuda:sm_80 ptx close True
# CHECK: cuda:sm_90a cubin close True
@run
def compile_and_call():
    for target in ("cuda:sm_80", "cuda:sm_90a"):
        f = lamina.compile(MATMUL, target=target)
        got = f(A, B, BIAS)
        close = np.allclose(got.astype(np.float32), WANT, rtol=1e-2, atol=2e-2)
        print(target, f.image_kind, "close", close and got.dtype == np.float16)


# CHECK-LABEL: TEST: bind_and_time
# CHECK: runs 5 positive True same True
@run
def bind_and_time():
    f = lamina.compile(MATMUL, target="cuda:sm_90a")
    arrays = f.check_arguments([A, B, BIAS])
    results = f.allocate_results()
    with f.bind(arrays, results) as call:
        times = call.time(runs=5, warmup=1)
        call.synchronize()
        call.read_back()
    print("runs", len(times), "positive", all(t > 0 for t in times),
          "same", bool((results[0] == f(A, B, BIAS)).all()))


# CHECK-LABEL: TEST: wrong_arguments
# CHECK: TypeError: @main argument #0: expected tensor<130x200xf16>
@run
def wrong_arguments():
    f = lamina.compile(MATMUL, target="cuda:sm_90a")
    try:
        f(A.astype(np.float32), B, BIAS)
    except TypeError as error:
        print("TypeError:", error)
