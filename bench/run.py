"""Lamina side by side with NumPy, jax.jit (XLA CPU) and torch.compile
(Inductor CPU): one process per system, the same workloads, the same
thread count.

    pip install -e '.[bench]'
    python bench/run.py                       # every system, every workload
    python bench/run.py --threads 1 --systems lamina,numpy --workloads matmul1024
    python bench/run.py --target=cpu:x86-64-v3 --output /tmp/avx2.md   # AVX2 code

Prints a table and writes bench/results.md (and bench/results.png when
matplotlib is installed): median time per call, GFLOP/s (contractions) or
GB/s (the rest: bytes of the inputs read once and the output written
once), the ratio to NumPy (> 1: faster than NumPy) and the compile time
(parse to callable, the first of that program in a process whose system
is initialised). A system that is not installed is reported as
missing. NumPy runs with `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` unset
(they halve OpenBLAS's speed on some machines) and every system gets the
same number of threads. Timing: warm-up by time (a core that has been
idle needs ~100 ms to reach full speed), then calls until a second has
passed (at least five); outputs are preallocated where the system allows.

Besides the four systems: `lamina_unfused` is Lamina with fusion turned off
(no `nn-fuse`, no upstream elementwise fusion: one loop nest per op), so the
table shows what fusion buys; Lamina's rows also give the compile time of a
second `compile` of the same program in the same process (`cached ms`,
loaded from the compiled-program cache, which the bench points at an empty
directory so that the first compile is cold); with `--tune SECONDS`,
`lamina_tuned` compiles with `tune=SECONDS`. Memory-bound rows say which
share of the machine's copy bandwidth they reach: NumPy's `copyto` of 64
MiB, split over the same threads, counting bytes read and written. The
`x best peer` column is the speed relative to the fastest of NumPy, XLA
and Inductor on that workload. The `block` workload is examples/attention.mlir (a pre-norm transformer block
of 16 tokens); NumPy runs it as Lamina's reference evaluator does (one
NumPy call per nn op). The bf16 matmuls have no NumPy row (NumPy has no
bf16 matmul). `torch` is PyTorch without compiling (its matmul is
oneDNN's, on AMX or AVX512-BF16 where the CPU has them), beside the
peers. The `*_int8` rows (integer products into i32: the matmuls i8 x
i8, the convolutions `conv2d_int8` and `pointwise_int8` uint8 activations
by int8 weights, both operands inputs) have one peer, `onnxruntime` (its
MatMulInteger and ConvInteger; not in the default systems: `--systems
lamina,onnxruntime --workloads matmul1024_int8,conv2d_int8`). The `linear*` workloads are a transformer's linear layers
on `[batch, tokens, features]` activations (`linear3d*`) beside the same
products written in 2-D (`linear2d*`, the batch's rows as one matrix):
the 3-D figure should be the 2-D one. `--target` names Lamina's CPU target
(`cpu:x86-64-v3`: AVX2 code, 16 registers of 8 lanes, on any machine that
runs it); NumPy, XLA and Inductor dispatch on the machine's CPU as always.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

WORKLOADS = {
    "matmul512": "matmul 512x512x512",
    "matmul1024": "matmul 1024x1024x1024",
    "matmul2048": "matmul 2048x2048x2048",
    "mlp": "gelu(x@W+b), x 1024x1024, W 1024x4096",
    "elementwise": "relu(x*a+b)*c over 16M",
    "softmax": "softmax 4096x4096 (rows)",
    "layer_norm": "layer_norm 4096x4096 (rows)",
    "attention": "attention B=1 H=8 S=512 D=64",
    "conv2d": "conv2d 3x3 N=1 C=64->64 56x56 pad 1",
    "pointwise": "conv2d 1x1 N=1 C=256->64 56x56",
    "depthwise": "depthwise conv2d 3x3 N=8 C=128 56x56 pad 1 (groups=128)",
    "grouped": "grouped conv2d 3x3 N=8 C=128->128 28x28 pad 1 (32 groups of 4 channels)",
    "block": "examples/attention.mlir: pre-norm transformer block, 16 tokens x 64, 4 heads",
    "matmul1024_bf16": "matmul 1024x1024x1024, bf16 in, bf16 out",
    "matmul1024_int8": "matmul 1024x1024x1024, int8 in, int32 out (signed, exact)",
    "matmul2048_int8": "matmul 2048x2048x2048, int8 in, int32 out (signed, exact)",
    "conv2d_int8": "conv2d 3x3 N=1 C=64->64 56x56 pad 1, uint8 x int8 -> int32",
    "pointwise_int8": "conv2d 1x1 N=1 C=256->64 56x56, uint8 x int8 -> int32",
    "matmul2048_bf16": "matmul 2048x2048x2048, bf16 in, bf16 out",
    "linear3d": "linear layer x@W on [batch, tokens, features]: x 1x197x768, W 768x3072",
    "linear2d": "linear3d's product in 2-D: x 197x768, W 768x3072",
    "linear3d_b4": "linear layer x@W: x 4x197x768, W 768x3072",
    "linear2d_b4": "linear3d_b4's product in 2-D: x 788x768, W 768x3072",
    "linear3d_gelu": "MLP layer gelu(x@W+b): x 4x197x768, W 768x3072, b 3072",
    "linear2d_gelu": "linear3d_gelu in 2-D: x 788x768, W 768x3072, b 3072",
}
# The linear layers: the shapes of x and W, and whether a bias and gelu
# follow (as in `mlp`). Each 3-D one has a 2-D twin of the same product
# (the batch's rows as one matrix), the figure it should reach.
LINEAR = {
    "linear3d": ((1, 197, 768), (768, 3072), False),
    "linear2d": ((197, 768), (768, 3072), False),
    "linear3d_b4": ((4, 197, 768), (768, 3072), False),
    "linear2d_b4": ((788, 768), (768, 3072), False),
    "linear3d_gelu": ((4, 197, 768), (768, 3072), True),
    "linear2d_gelu": ((788, 768), (768, 3072), True),
}
SYSTEMS = ["lamina", "lamina_unfused", "numpy", "jax", "torch_compile", "torch"]
PEERS = ("numpy", "jax", "torch_compile", "onnxruntime")
EXAMPLE_BLOCK = os.path.join(os.path.dirname(HERE), "examples", "attention.mlir")


# The integer convolutions: the float workload of the same shapes.
INTEGER_CONVOLUTIONS = {"conv2d_int8": "conv2d", "pointwise_int8": "pointwise"}


def shapes(workload: str) -> list[tuple[int, ...]]:
    workload = INTEGER_CONVOLUTIONS.get(workload, workload)
    if workload.startswith("matmul"):
        n = int(workload[6:].split("_")[0])
        return [(n, n), (n, n)]
    if workload in LINEAR:
        x, w, gelu = LINEAR[workload]
        return [x, w] + [(w[-1],)] * gelu
    return {
        "mlp": [(1024, 1024), (1024, 4096), (4096,)],
        "elementwise": [(1 << 24,)] * 4,
        "softmax": [(4096, 4096)],
        "layer_norm": [(4096, 4096), (4096,), (4096,)],
        "attention": [(1, 8, 512, 64)] * 3,
        "conv2d": [(1, 64, 56, 56), (64, 64, 3, 3)],
        "pointwise": [(1, 256, 56, 56), (64, 256, 1, 1)],
        "depthwise": [(8, 128, 56, 56), (128, 1, 3, 3)],
        "grouped": [(8, 128, 28, 28), (128, 4, 3, 3)],
        "block": [(1, 16, 64), (64,), (64,), (64, 64), (64, 64), (64, 64), (64, 64), (64,),
                  (64,), (64, 256), (256,), (256, 64), (64,)],
    }[workload]


# The grouped convolutions' group counts.
GROUPS = {"depthwise": 128, "grouped": 32}


def work(workload: str) -> tuple[float, str]:
    """(amount, unit): FLOPs for contractions, bytes moved for the rest."""
    if workload in INTEGER_CONVOLUTIONS:
        return work(INTEGER_CONVOLUTIONS[workload])[0], "GOP/s"
    if workload.startswith("matmul"):
        n = int(workload[6:].split("_")[0])
        return 2.0 * n ** 3, "GOP/s" if workload.endswith("_int8") else "GFLOP/s"
    if workload == "block":
        # The matmuls (q, k, v, output projection, two MLP layers) and attention.
        return (2.0 * 16 * 64 * 64 * 4 + 2 * 2.0 * 16 * 64 * 256
                + 2 * 2.0 * 4 * 16 * 16 * 16), "GFLOP/s"
    if workload == "mlp":
        return 2.0 * 1024 * 1024 * 4096, "GFLOP/s"
    if workload in LINEAR:
        x, w, _ = LINEAR[workload]
        return 2.0 * math.prod(x) * w[-1], "GFLOP/s"
    if workload == "attention":
        return 2 * 2.0 * 8 * 512 * 512 * 64, "GFLOP/s"
    if workload == "conv2d":
        return 2.0 * 64 * 64 * 9 * 56 * 56, "GFLOP/s"
    if workload in GROUPS or workload == "pointwise":
        (n, c, h, w), (f, cg, kh, kw) = shapes(workload)
        return 2.0 * n * f * h * w * cg * kh * kw, "GFLOP/s"
    inputs = sum(math.prod(s) for s in shapes(workload)) * 4
    output = math.prod(shapes(workload)[0]) * 4
    return float(inputs + output), "GB/s"


def lamina_source(workload: str) -> str:
    def t(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    if workload == "block":
        with open(EXAMPLE_BLOCK) as f:
            return f.read()
    if workload in INTEGER_CONVOLUTIONS:
        (x_shape, w_shape), y_shape = shapes(workload), _output_shape(workload)
        x = t(x_shape).replace("f32", "ui8")
        w, y = t(w_shape).replace("f32", "i8"), t(y_shape).replace("f32", "i32")
        padding = ("{padding = array<i64: 1, 1, 1, 1>} " if w_shape[2] == 3 else "")
        return (f'func.func @main(%x: {x}, %w: {w}) -> {y} {{\n'
                f'  %0 = "nn.conv2d"(%x, %w) {padding}: ({x}, {w}) -> {y}\n'
                f'  return %0 : {y}\n}}\n')
    if workload.endswith("_int8"):
        n = int(workload[6:].split("_")[0])
        a, c = t((n, n)).replace("f32", "i8"), t((n, n)).replace("f32", "i32")
        return (f'func.func @main(%a: {a}, %b: {a}) -> {c} {{\n'
                f'  %0 = "nn.matmul"(%a, %b) : ({a}, {a}) -> {c}\n  return %0 : {c}\n}}\n')
    if workload.startswith("matmul"):
        n = int(workload[6:].split("_")[0])
        a = t((n, n)).replace("f32", "bf16" if workload.endswith("_bf16") else "f32")
        return (f'func.func @main(%a: {a}, %b: {a}) -> {a} {{\n'
                f'  %0 = "nn.matmul"(%a, %b) : ({a}, {a}) -> {a}\n  return %0 : {a}\n}}\n')
    if workload == "mlp" or LINEAR.get(workload, (0, 0, False))[2]:
        x, w, b = (t(shape) for shape in shapes(workload))
        y = t(_output_shape(workload))
        return (f'func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n'
                f'  %0 = "nn.matmul"(%x, %w) : ({x}, {w}) -> {y}\n'
                f'  %1 = "nn.add"(%0, %b) : ({y}, {b}) -> {y}\n'
                f'  %2 = "nn.gelu"(%1) : ({y}) -> {y}\n  return %2 : {y}\n}}\n')
    if workload in LINEAR:
        x, w = (t(shape) for shape in shapes(workload))
        y = t(_output_shape(workload))
        return (f'func.func @main(%x: {x}, %w: {w}) -> {y} {{\n'
                f'  %0 = "nn.matmul"(%x, %w) : ({x}, {w}) -> {y}\n  return %0 : {y}\n}}\n')
    if workload == "elementwise":
        v = t((1 << 24,))
        return (f'func.func @main(%x: {v}, %a: {v}, %b: {v}, %c: {v}) -> {v} {{\n'
                f'  %0 = "nn.mul"(%x, %a) : ({v}, {v}) -> {v}\n'
                f'  %1 = "nn.add"(%0, %b) : ({v}, {v}) -> {v}\n'
                f'  %2 = "nn.relu"(%1) : ({v}) -> {v}\n'
                f'  %3 = "nn.mul"(%2, %c) : ({v}, {v}) -> {v}\n  return %3 : {v}\n}}\n')
    if workload == "softmax":
        x = t((4096, 4096))
        return (f'func.func @main(%x: {x}) -> {x} {{\n'
                f'  %0 = "nn.softmax"(%x) {{axis = -1 : i64}} : ({x}) -> {x}\n'
                f'  return %0 : {x}\n}}\n')
    if workload == "layer_norm":
        x, g = t((4096, 4096)), t((4096,))
        return (f'func.func @main(%x: {x}, %g: {g}, %b: {g}) -> {x} {{\n'
                f'  %0 = "nn.layer_norm"(%x, %g, %b) : ({x}, {g}, {g}) -> {x}\n'
                f'  return %0 : {x}\n}}\n')
    if workload == "attention":
        q = t((1, 8, 512, 64))
        return (f'func.func @main(%q: {q}, %k: {q}, %v: {q}) -> {q} {{\n'
                f'  %0 = "nn.attention"(%q, %k, %v) : ({q}, {q}, {q}) -> {q}\n'
                f'  return %0 : {q}\n}}\n')
    if workload == "conv2d":
        x, w = t((1, 64, 56, 56)), t((64, 64, 3, 3))
        return (f'func.func @main(%x: {x}, %w: {w}) -> {x} {{\n'
                f'  %0 = "nn.conv2d"(%x, %w) {{padding = array<i64: 1, 1, 1, 1>}} '
                f': ({x}, {w}) -> {x}\n  return %0 : {x}\n}}\n')
    if workload == "pointwise":
        (x_shape, w_shape) = shapes(workload)
        x, w, y = t(x_shape), t(w_shape), t((1, 64, 56, 56))
        return (f'func.func @main(%x: {x}, %w: {w}) -> {y} {{\n'
                f'  %0 = "nn.conv2d"(%x, %w) : ({x}, {w}) -> {y}\n  return %0 : {y}\n}}\n')
    if workload in GROUPS:
        x, w = (t(shape) for shape in shapes(workload))
        return (f'func.func @main(%x: {x}, %w: {w}) -> {x} {{\n'
                f'  %0 = "nn.conv2d"(%x, %w) {{padding = array<i64: 1, 1, 1, 1>, '
                f'groups = {GROUPS[workload]} : i64}} : ({x}, {w}) -> {x}\n'
                f'  return %0 : {x}\n}}\n')
    raise KeyError(workload)


# ---------------------------------------------------------------------------
# Timing (inside a system's process).


def measure(call, warmup: float = 0.3, budget: float = 1.0) -> float:
    """The median seconds of `call()` after warming up for `warmup` s."""
    start = time.perf_counter()
    while time.perf_counter() - start < warmup:
        call()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < budget or len(times) < 5:
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def inputs(workload: str):
    import numpy as np
    rng = np.random.default_rng(0)
    if workload in INTEGER_CONVOLUTIONS:
        x_shape, w_shape = shapes(workload)
        return [rng.integers(0, 256, x_shape, dtype=np.uint8),
                rng.integers(-128, 128, w_shape, dtype=np.int8)]
    if workload.endswith("_int8"):
        return [rng.integers(-128, 128, s, dtype=np.int8) for s in shapes(workload)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes(workload)]
    if workload.endswith("_bf16"):
        import ml_dtypes
        arrays = [a.astype(ml_dtypes.bfloat16) for a in arrays]
    return arrays


_WARM = []


def warm_up_lamina(lamina, target) -> None:
    """Compiles a small other program once per process, so that what a
    process does once (loading the JIT's and OpenMP's libraries, lazy
    imports) is not counted as the first workload's compile time, as
    jax's and torch's backends are initialised before theirs is timed."""
    if not _WARM:
        lamina.compile(lamina.parse(
            'func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {\n'
            '  %0 = "nn.matmul"(%x, %x) : (tensor<64x64xf32>, tensor<64x64xf32>) -> '
            'tensor<64x64xf32>\n  %1 = "nn.softmax"(%0) {axis = -1 : i64} : '
            '(tensor<64x64xf32>) -> tensor<64x64xf32>\n  return %1 : tensor<64x64xf32>\n}\n'),
            target=target)
        _WARM.append(True)


def lamina_target_spec(spec: str, threads: int) -> str:
    """The target spec `spec` (`cpu`, `cpu:x86-64-v3`, ...) on `threads` threads."""
    kind, _, rest = spec.partition(":")
    return f"{kind}:{rest + ',' if rest else ''}threads={threads}"


def run_lamina(workload: str, threads: int, fuse: bool = True, tune: float | None = None):
    import lamina
    target = lamina.get_target(lamina_target_spec(os.environ.get("LAMINA_BENCH_TARGET", "cpu"),
                                                  threads))
    warm_up_lamina(lamina, target)
    pipeline = None
    if not fuse:
        pipeline = target.pipeline().remove("nn-fuse").remove("linalg-fuse-elementwise-ops")
    start = time.perf_counter()
    f = lamina.compile(lamina.parse(lamina_source(workload)), target=target, pipeline=pipeline,
                       tune=tune)
    compile_s = time.perf_counter() - start
    cached_s = None
    if tune is None:  # a tuned compile searches again, whatever is cached
        start = time.perf_counter()
        lamina.compile(lamina.parse(lamina_source(workload)), target=target, pipeline=pipeline)
        cached_s = time.perf_counter() - start
    args = f.check_arguments(inputs(workload))
    results = f.allocate_results()
    return measure(lambda: f.call_with_results(args, results)), compile_s, cached_s


def run_lamina_unfused(workload: str, threads: int):
    return run_lamina(workload, threads, fuse=False)


def run_lamina_tuned(workload: str, threads: int):
    return run_lamina(workload, threads, tune=float(os.environ["LAMINA_BENCH_TUNE"]))


def _numpy_function(workload: str, np):
    if workload.startswith("matmul") or workload in LINEAR and not LINEAR[workload][2]:
        return lambda a, b, out: np.matmul(a, b, out=out)
    if workload == "mlp" or workload in LINEAR:
        def mlp(x, w, b, out):
            y = x @ w + b
            # NumPy has no erf: the tanh form, which costs NumPy the same.
            np.multiply(0.5 * y, 1 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)), out=out)
        return mlp
    if workload == "elementwise":
        def chain(x, a, b, c, out):
            np.multiply(x, a, out=out)
            np.add(out, b, out=out)
            np.maximum(out, 0, out=out)
            np.multiply(out, c, out=out)
        return chain
    if workload == "softmax":
        def softmax(x, out):
            np.subtract(x, x.max(axis=-1, keepdims=True), out=out)
            np.exp(out, out=out)
            out /= out.sum(axis=-1, keepdims=True)
        return softmax
    if workload == "layer_norm":
        def layer_norm(x, g, b, out):
            mean = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            np.multiply((x - mean) / np.sqrt(var + 1e-5), g, out=out)
            out += b
        return layer_norm
    if workload == "attention":
        def attention(q, k, v, out):
            s = q @ np.swapaxes(k, -1, -2) / np.float32(8.0)
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            s /= s.sum(axis=-1, keepdims=True)
            np.matmul(s, v, out=out)
        return attention
    if workload == "conv2d":
        def conv(x, w, out):
            padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
            windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
            np.copyto(out, np.einsum("nchwij,fcij->nfhw", windows, w, optimize=True))
        return conv
    if workload == "pointwise":
        def pointwise(x, w, out):
            n, c, h, width = x.shape
            np.matmul(w.reshape(w.shape[0], c), x.reshape(n, c, h * width),
                      out=out.reshape(n, w.shape[0], h * width))
        return pointwise
    if workload in GROUPS:
        groups = GROUPS[workload]

        def grouped(x, w, out):
            n, c, h, width = x.shape
            padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
            windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
            windows = windows.reshape(n, groups, c // groups, h, width, 3, 3)
            kernel = w.reshape(groups, w.shape[0] // groups, c // groups, 3, 3)
            np.copyto(out.reshape(n, groups, -1, h, width),
                      np.einsum("ngchwij,gfcij->ngfhw", windows, kernel, optimize=True))
        return grouped
    raise KeyError(workload)


def _output_shape(workload: str):
    workload = INTEGER_CONVOLUTIONS.get(workload, workload)
    if workload == "mlp":
        return (1024, 4096)
    if workload in LINEAR:
        x, w, _ = LINEAR[workload]
        return x[:-1] + w[-1:]
    if workload == "pointwise":
        return (1, 64, 56, 56)
    return shapes(workload)[0]


def run_numpy(workload: str, threads: int):
    import numpy as np
    if workload.endswith("_bf16"):
        raise NotImplementedError("NumPy has no bf16 matmul")
    if workload.endswith("_int8"):
        raise NotImplementedError("the int8 rows' peer is onnxruntime")
    if workload == "block":
        import lamina
        from lamina.reference import evaluate
        module = lamina.parse(lamina_source(workload))
        args = inputs(workload)
        return measure(lambda: evaluate(module, args)), None
    f = _numpy_function(workload, np)
    args = inputs(workload)
    out = np.empty(_output_shape(workload), np.float32)
    return measure(lambda: f(*args, out)), None


def _peer_workload(workload: str) -> str:
    """The workload whose peer function computes `workload`: `mlp`'s for
    the linear layers with a bias and gelu (whatever their shapes)."""
    return "mlp" if LINEAR.get(workload, (0, 0, False))[2] else workload


def jax_function(workload: str):
    """The workload written with jax.numpy (before jax.jit)."""
    import jax
    import jax.numpy as jnp
    return {
        "mlp": lambda x, w, b: jax.nn.gelu(x @ w + b, approximate=False),
        "elementwise": lambda x, a, b, c: jnp.maximum(x * a + b, 0) * c,
        "softmax": lambda x: jax.nn.softmax(x, axis=-1),
        "layer_norm": lambda x, g, b: (x - x.mean(-1, keepdims=True))
        / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b,
        "attention": lambda q, k, v: jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / 8.0, axis=-1) @ v,
        "conv2d": lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1))),
        "pointwise": lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), ((0, 0), (0, 0))),
        "depthwise": lambda x, w: jax.lax.conv_general_dilated(
            x, w, (1, 1), ((1, 1), (1, 1)), feature_group_count=GROUPS["depthwise"]),
        "grouped": lambda x, w: jax.lax.conv_general_dilated(
            x, w, (1, 1), ((1, 1), (1, 1)), feature_group_count=GROUPS["grouped"]),
        "block": lambda *a: example_block(jnp, a, jax.nn.softmax,
                                          lambda y: jax.nn.gelu(y, approximate=True),
                                          lambda y, p: jnp.transpose(y, p)),
    }.get(_peer_workload(workload), lambda a, b: a @ b)


def run_jax(workload: str, threads: int):
    import jax
    if workload.endswith("_int8"):
        raise NotImplementedError("the int8 rows' peer is onnxruntime")
    f = jax_function(workload)
    args = [jax.device_put(a) for a in inputs(workload)]
    start = time.perf_counter()
    compiled = jax.jit(f).lower(*args).compile()
    compile_s = time.perf_counter() - start
    return measure(lambda: compiled(*args).block_until_ready()), compile_s


def torch_function(workload: str):
    """The workload written with torch (before torch.compile)."""
    import torch
    import torch.nn.functional as F
    return {
        "mlp": lambda x, w, b: F.gelu(x @ w + b),
        "elementwise": lambda x, a, b, c: torch.relu(x * a + b) * c,
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "layer_norm": lambda x, g, b: F.layer_norm(x, (4096,), g, b),
        "attention": lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
        "pointwise": lambda x, w: F.conv2d(x, w),
        "depthwise": lambda x, w: F.conv2d(x, w, padding=1, groups=GROUPS["depthwise"]),
        "grouped": lambda x, w: F.conv2d(x, w, padding=1, groups=GROUPS["grouped"]),
        "block": lambda *a: example_block(torch, a, lambda y, axis: torch.softmax(y, dim=axis),
                                          lambda y: F.gelu(y, approximate="tanh"),
                                          lambda y, p: y.permute(*p)),
    }.get(_peer_workload(workload), lambda a, b: a @ b)


def _torch_inputs(workload: str):
    import torch
    if workload.endswith("_bf16"):
        return [torch.from_numpy(a.astype("float32")).to(torch.bfloat16)
                for a in inputs(workload)]
    return [torch.from_numpy(a) for a in inputs(workload)]


def run_torch(workload: str, threads: int):
    """The workload in PyTorch, not compiled (its own kernels: oneDNN's
    matmul and convolutions)."""
    import torch
    torch.set_num_threads(threads)
    f = torch_function(workload)
    args = _torch_inputs(workload)

    def call():
        with torch.no_grad():
            f(*args)
    return measure(call), None


def run_torch_compile(workload: str, threads: int):
    import torch
    if workload.endswith("_int8"):
        raise NotImplementedError("the int8 rows' peer is onnxruntime")
    torch.set_num_threads(threads)
    f = torch_function(workload)
    args = _torch_inputs(workload)
    compiled = torch.compile(f)
    start = time.perf_counter()
    with torch.no_grad():
        compiled(*args)
    compile_s = time.perf_counter() - start

    def call():
        with torch.no_grad():
            compiled(*args)
    return measure(call), compile_s


def onnxruntime_model(workload: str) -> bytes:
    """The int8 workloads as an ONNX MatMulInteger or ConvInteger of two
    inputs (no zero points), serialised."""
    from onnx import TensorProto, helper
    if not workload.endswith("_int8"):
        raise NotImplementedError("the bench's onnxruntime rows are the int8 workloads "
                                  "(MatMulInteger, ConvInteger)")
    a, b = shapes(workload)
    if workload in INTEGER_CONVOLUTIONS:
        pads = [1, 1, 1, 1] if b[2] == 3 else [0, 0, 0, 0]
        node = helper.make_node("ConvInteger", ["a", "b"], ["y"], pads=pads)
        types, y = (TensorProto.UINT8, TensorProto.INT8), _output_shape(workload)
    else:
        node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
        types, y = (TensorProto.INT8, TensorProto.INT8), (a[0], b[1])
    graph = helper.make_graph(
        [node], workload,
        [helper.make_tensor_value_info("a", types[0], a),
         helper.make_tensor_value_info("b", types[1], b)],
        [helper.make_tensor_value_info("y", TensorProto.INT32, y)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def run_onnxruntime(workload: str, threads: int):
    import onnxruntime
    model = onnxruntime_model(workload)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    start = time.perf_counter()
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    compile_s = time.perf_counter() - start
    a, b = inputs(workload)
    return measure(lambda: session.run(None, {"a": a, "b": b})), compile_s


def example_block(xp, a, softmax, gelu, transpose):
    """examples/attention.mlir written with an array library `xp` (jax.numpy
    or torch): layer norms, causal 4-head attention, a tanh-GELU MLP."""
    x, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2 = a

    def mean(y):
        return y.sum(-1)[..., None] / y.shape[-1]

    def norm(y, g, b):
        centred = y - mean(y)
        return centred / xp.sqrt(mean(centred * centred) + 1e-5) * g + b

    def heads(y):
        return transpose(y.reshape(1, 16, 4, 16), (0, 2, 1, 3))
    n1 = norm(x, g1, b1)
    q, k, v = heads(n1 @ wq), heads(n1 @ wk), heads(n1 @ wv)
    scores = q @ transpose(k, (0, 1, 3, 2)) * 0.25
    mask = xp.tril(xp.ones((16, 16))) > 0
    scores = xp.where(mask, scores, -xp.inf)
    att = transpose(softmax(scores, -1) @ v, (0, 2, 1, 3)).reshape(1, 16, 64)
    r1 = x + att @ wo
    return r1 + gelu(norm(r1, g2, b2) @ w1 + c1) @ w2 + c2


RUNNERS = {"lamina": run_lamina, "lamina_unfused": run_lamina_unfused,
           "lamina_tuned": run_lamina_tuned, "numpy": run_numpy, "jax": run_jax,
           "torch_compile": run_torch_compile, "torch": run_torch,
           "onnxruntime": run_onnxruntime}
MODULES = {"lamina": "lamina", "lamina_unfused": "lamina", "lamina_tuned": "lamina",
           "numpy": "numpy", "jax": "jax", "torch_compile": "torch", "torch": "torch",
           "onnxruntime": "onnxruntime"}


def system_main(system: str, workloads: list[str], threads: int) -> None:
    """Runs in the system's own process; prints one JSON line per workload."""
    try:
        __import__(MODULES[system])
    except ImportError as error:
        print(json.dumps({"system": system, "missing": str(error)}), flush=True)
        return
    for workload in workloads:
        try:
            seconds, compile_s, *cached = RUNNERS[system](workload, threads)
            row = {"system": system, "workload": workload, "seconds": seconds,
                   "compile_seconds": compile_s, "cached_seconds": cached[0] if cached else None}
        except NotImplementedError as error:
            row = {"system": system, "workload": workload, "absent": str(error)}
        except Exception as error:  # a system that cannot run a workload says so
            row = {"system": system, "workload": workload,
                   "error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
        print(json.dumps(row), flush=True)


# ---------------------------------------------------------------------------
# The driver.


def system_environment(system: str, threads: int) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "LAMINA_NUM_THREADS"):
        env[name] = str(threads)
    if system == "numpy":
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    if system.startswith("lamina"):
        # An empty compiled-program cache: the first compile is cold.
        env["LAMINA_CACHE_DIR"] = tempfile.mkdtemp(prefix="lamina-bench-cache-")
        env.pop("LAMINA_CACHE", None)
    if system == "jax":
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                            f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
                            f" intra_op_parallelism_threads={threads}").strip()
        env["JAX_PLATFORMS"] = "cpu"
    return env


def run_system(system: str, workloads: list[str], threads: int, bar=None) -> list[dict]:
    """The system's rows, read as its process prints them (`bar`, a
    progress bar, advances by one per workload)."""
    command = [sys.executable, os.path.abspath(__file__), "--child", system,
               "--workloads", ",".join(workloads), "--threads", str(threads)]
    rows = []
    with tempfile.TemporaryFile(mode="w+") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True,
                                   env=system_environment(system, threads))
        for line in process.stdout:
            if line.startswith("{"):
                rows.append(json.loads(line))
                if bar is not None:
                    bar.update(len(workloads) if "missing" in rows[-1] else 1)
        process.wait()
        errors.seek(0)
        stderr = errors.read().strip()
    if process.returncode != 0 and not rows:
        rows.append({"system": system, "missing": f"exit code {process.returncode}: "
                     + stderr.splitlines()[-1][:200] if stderr
                     else f"exit code {process.returncode}"})
    return rows


def copy_bandwidth(threads: int) -> float:
    """The machine's copy bandwidth in GB/s (bytes read and written):
    NumPy's copyto of 64 MiB, split over `threads` threads (it releases
    the GIL), median of 20 after warming up."""
    import concurrent.futures
    import numpy as np
    source = np.ones(1 << 24, np.float32)
    target = np.empty_like(source)
    pieces = np.array_split(np.arange(source.size), threads)
    bounds = [(p[0], p[-1] + 1) for p in pieces]
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        def copy():
            list(pool.map(lambda b: np.copyto(target[b[0]:b[1]], source[b[0]:b[1]]), bounds))
        seconds = measure(copy, warmup=0.3, budget=0.5)
    return 2 * source.nbytes / seconds / 1e9


def table(rows: list[dict], workloads: list[str], systems: list[str], threads: int,
          bandwidth: float | None = None) -> str:
    by = {(r["system"], r.get("workload")): r for r in rows}
    missing = {r["system"]: r["missing"] for r in rows if "missing" in r}
    lines = ["| workload | system | median ms | rate | of copy bandwidth | x NumPy (>1 faster) "
             "| x best peer | compile ms | cached ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for workload in workloads:
        amount, unit = work(workload)
        base = by.get(("numpy", workload), {}).get("seconds")
        peers = [by[p, workload]["seconds"] for p in PEERS if "seconds" in by.get((p, workload), {})]
        best = min(peers) if peers else None
        for system in systems:
            if system in missing:
                continue
            row = by.get((system, workload))
            if row is None:
                continue
            if "error" in row:
                lines.append(f"| {workload} | {system} | failed: {row['error']} | | | | | | |")
                continue
            if "absent" in row:
                lines.append(f"| {workload} | {system} | - ({row['absent']}) | | | | | | |")
                continue
            seconds = row["seconds"]
            rate = amount / seconds / 1e9
            share = (f"{rate / bandwidth * 100:.0f}%" if bandwidth and unit == "GB/s" else "-")
            ratio = f"{base / seconds:.2f}" if base else "-"
            versus_best = f"{best / seconds:.2f}" if best else "-"
            compile_ms, cached_ms = (f"{row[key] * 1000:.0f}" if row.get(key) is not None
                                     else "-" for key in ("compile_seconds", "cached_seconds"))
            lines.append(f"| {workload} | {system} | {seconds * 1000:.2f} | {rate:.1f} {unit} "
                         f"| {share} | {ratio} | {versus_best} | {compile_ms} | {cached_ms} |")
    for system, why in missing.items():
        lines.append(f"\n{system}: missing ({why})")
    return "\n".join(lines)


def plot(rows: list[dict], workloads: list[str], systems: list[str], path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    by = {(r["system"], r.get("workload")): r for r in rows if "seconds" in r}
    present = [s for s in systems if any((s, w) in by for w in workloads)]
    figure, axis = plt.subplots(figsize=(max(6, len(workloads) * 1.2), 4))
    width = 0.8 / max(1, len(present))
    for index, system in enumerate(present):
        ratios = []
        for workload in workloads:
            base = by.get(("numpy", workload))
            row = by.get((system, workload))
            ratios.append(base["seconds"] / row["seconds"] if base and row else 0)
        axis.bar([i + index * width for i in range(len(workloads))], ratios, width, label=system)
    axis.set_xticks([i + width * (len(present) - 1) / 2 for i in range(len(workloads))])
    axis.set_xticklabels(workloads, rotation=30, ha="right")
    axis.axhline(1.0, color="gray", linewidth=0.8)
    axis.set_ylabel("speed vs NumPy (higher is faster)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--output", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--note", default="", help="a line written under the table's heading")
    parser.add_argument("--tune", type=float, metavar="SECONDS",
                        help="also run lamina_tuned: Lamina compiled with tune=SECONDS")
    parser.add_argument("--target", default="cpu",
                        help="Lamina's CPU target (e.g. cpu:x86-64-v3 for AVX2 code; default "
                             "cpu, this machine's CPU); the other systems run as they are")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if not options.child:
        import lamina
        try:
            target = lamina.get_target(lamina_target_spec(options.target, options.threads))
        except ValueError as error:
            parser.error(f"--target={options.target}: {error}")
        if target.kind != "cpu" or not target.native:
            parser.error(f"--target={options.target}: the bench runs a cpu target of this "
                         "machine's architecture")
        os.environ["LAMINA_BENCH_TARGET"] = options.target
    workloads = [w for w in options.workloads.split(",") if w]
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(f"unknown workload '{workload}' (workloads: {', '.join(WORKLOADS)})")
    if options.child:
        system_main(options.child, workloads, options.threads)
        return 0
    systems = [s for s in options.systems.split(",") if s]
    if options.tune:
        os.environ["LAMINA_BENCH_TUNE"] = str(options.tune)
        systems.insert(systems.index("lamina") + 1 if "lamina" in systems else 0,
                       "lamina_tuned")
    for system in systems:
        if system not in RUNNERS:
            parser.error(f"unknown system '{system}' (systems: {', '.join(SYSTEMS)})")
    from lamina.progress import note, progress_bar
    rows = []
    with progress_bar(total=len(systems) * len(workloads), description="bench",
                      unit="workload") as bar:
        for system in systems:
            note(f"running {system}...", sys.stderr)
            bar.set_description(system)
            rows.extend(run_system(system, workloads, options.threads, bar))
    bandwidth = copy_bandwidth(options.threads)
    text = table(rows, workloads, systems, options.threads, bandwidth)
    print(text)
    command = " ".join(["python bench/run.py"] + (argv if argv is not None else sys.argv[1:]))
    heading = (f"# Lamina benchmarks\n\n{datetime.date.today().isoformat()}, "
               f"{platform.machine()} {platform.processor() or ''}, {options.threads} thread(s), "
               f"`{command}`; Lamina's target `{options.target}`; copy bandwidth "
               f"{bandwidth:.1f} GB/s (NumPy copyto of 64 MiB "
               f"over {options.threads} thread(s), bytes read and written).\n"
               + (f"\n{options.note}\n" if options.note else "") + "\n")
    workload_list = "\n".join(f"* `{w}`: {WORKLOADS[w]}" for w in workloads)
    png = os.path.splitext(options.output)[0] + ".png"
    plotted = plot(rows, workloads, systems, png)
    with open(options.output, "w") as f:
        f.write(heading + text + "\n\nWorkloads (f32 unless named):\n\n" + workload_list + "\n"
                + (f"\n![speed vs NumPy]({os.path.basename(png)})\n" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
