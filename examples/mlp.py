"""The MLP of mlp.mlir, written with Lamina's Python API.

    python examples/mlp.py

Traces `mlp` into an nn program on the first call (once per signature of
its arguments), compiles it for the CPU and checks the result with NumPy.
"""

import math

import numpy as np

import lamina
from lamina import nn


@lamina.jit(target="cpu")
def mlp(x, w1, b1, w2, b2):
    hidden = nn.gelu(nn.matmul(x, w1) + b1)
    return nn.softmax(nn.matmul(hidden, w2) + b2, axis=-1)


def numpy_mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.vectorize(math.erf)(h / math.sqrt(2.0)))
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    shapes = [(8, 64), (64, 128), (128,), (128, 10), (10,)]
    args = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    probabilities = mlp(*args)
    error = np.abs(probabilities - numpy_mlp(*[a.astype(np.float64) for a in args])).max()
    print(mlp.trace(*args))
    print(f"class of each row: {probabilities.argmax(axis=-1)}")
    print(f"max abs error vs NumPy: {error:.2e}")
    assert error < 1e-5, error


if __name__ == "__main__":
    main()
