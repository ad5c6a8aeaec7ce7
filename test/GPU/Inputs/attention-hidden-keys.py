"""Inputs for nn-attention.mlir's masked attentions (@main's arguments):
q, k, v uniform in [-1, 1], additive masks of -inf (30% of the keys
hidden, and every key of queries 0 and 5: those rows give 0) and values
in [-1, 1].

    attention-hidden-keys.py OUT.npz
"""

import sys

import numpy as np

rng = np.random.default_rng(11)


def mask(shape, dtype):
    hidden = rng.uniform(0, 1, shape) < 0.3
    hidden[..., [0, 5], :] = True
    return np.where(hidden, -np.inf, rng.uniform(-1, 1, shape)).astype(dtype)


def uniform(shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


f16, f32 = np.float16, np.float32
arrays = [uniform((2, 3, 37, 64), f16), uniform((2, 3, 100, 64), f16),
          uniform((2, 3, 100, 64), f16), mask((3, 37, 100), f16),
          uniform((2, 37, 16), f32), uniform((2, 50, 16), f32), uniform((2, 50, 16), f32),
          mask((2, 37, 50), f32)]
np.savez(sys.argv[1], **{f"arg{i}": a for i, a in enumerate(arrays)})
