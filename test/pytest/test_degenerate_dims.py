"""Dims of 0 and 1 on the CPU: each program compiled with `lamina.jit`
against NumPy, written here independently of the ops' references (f32,
rtol = atol = 1e-5; the sums and products are over a handful of elements).

An empty tensor is a valid value (an empty slice, a batch of 0, a
reduction over an empty dim whose sum is 0); a dim of 1 is where
broadcasting, unit-dim folding and the vectoriser's shortcuts meet.
"""

from __future__ import annotations

import numpy as np
import pytest

import lamina
from lamina import nn

RTOL = ATOL = 1e-5


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True)) if x.size else x
    return e / e.sum(axis=axis, keepdims=True) if x.size else x


# (name, program, NumPy, argument shapes)
CASES = [
    ("add_empty_rows", lambda x, y: x + y, lambda x, y: x + y, [(0, 8), (1, 8)]),
    ("add_unit_broadcast", lambda x, y: x + y, lambda x, y: x + y, [(1, 1), (3, 1)]),
    ("relu_empty", lambda x: nn.relu(x), lambda x: np.maximum(x, 0), [(2, 0, 3)]),
    ("matmul_no_rows", lambda a, b: nn.matmul(a, b), np.matmul, [(0, 4), (4, 5)]),
    ("matmul_no_columns", lambda a, b: nn.matmul(a, b), np.matmul, [(3, 4), (4, 0)]),
    ("matmul_empty_reduction", lambda a, b: nn.matmul(a, b), np.matmul, [(3, 0), (0, 5)]),
    ("matmul_one_row", lambda a, b: nn.matmul(a, b), np.matmul, [(1, 7), (7, 33)]),
    ("matmul_one_deep", lambda a, b: nn.matmul(a, b), np.matmul, [(5, 1), (1, 6)]),
    ("batch_matmul_unit_batch", lambda a, b: nn.matmul(a, b), np.matmul, [(1, 3, 4), (1, 4, 2)]),
    ("reduce_sum_empty_axis", lambda x: nn.reduce_sum(x, axes=(1,)),
     lambda x: x.sum(axis=1), [(3, 0)]),
    ("reduce_sum_empty_rows", lambda x: nn.reduce_sum(x, axes=(1,)),
     lambda x: x.sum(axis=1), [(0, 5)]),
    ("reduce_max_unit_axis", lambda x: nn.reduce_max(x, axes=(0,)),
     lambda x: x.max(axis=0), [(1, 6)]),
    ("softmax_one_column", lambda x: nn.softmax(x), _softmax, [(4, 1)]),
    ("softmax_no_rows", lambda x: nn.softmax(x), _softmax, [(0, 7)]),
    ("transpose_empty", lambda x: nn.transpose(x, perm=(1, 0)), np.transpose, [(0, 3)]),
    ("slice_empty_at_end", lambda x: nn.slice(x, starts=(0, 8), limits=(4, 8)),
     lambda x: x[:, 8:8], [(4, 8)]),
    ("slice_empty_middle", lambda x: nn.slice(x, starts=(2, 0), limits=(2, 8)),
     lambda x: x[2:2, :], [(4, 8)]),
    ("slice_empty_then_add", lambda x: nn.relu(nn.slice(x, starts=(0, 8), limits=(4, 8)) + 1.0),
     lambda x: np.maximum(x[:, 8:8] + 1.0, 0), [(4, 8)]),
    ("concat_with_empty", lambda x, y: nn.concat([x, y], axis=1),
     lambda x, y: np.concatenate([x, y], axis=1), [(2, 0), (2, 3)]),
    ("concat_empty_last", lambda x, y: nn.concat([x, y], axis=1),
     lambda x, y: np.concatenate([x, y], axis=1), [(2, 3), (2, 0)]),
    ("concat_empty_slice_last", lambda x: nn.concat([x, nn.slice(x, starts=(0, 3),
                                                                 limits=(2, 3))], axis=1),
     lambda x: np.concatenate([x, x[:, 3:3]], axis=1), [(2, 3)]),
    ("concat_all_empty", lambda x, y: nn.concat([x, y], axis=0),
     lambda x, y: np.concatenate([x, y], axis=0), [(0, 3), (0, 3)]),
    ("layer_norm_one_row", lambda x, g, b: nn.layer_norm(x, g, b, axis=1),
     lambda x, g, b: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
     * g + b, [(1, 8), (8,), (8,)]),
    ("attention_one_query", lambda q, k, v: nn.attention(q, k, v),
     lambda q, k, v: _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v,
     [(1, 1, 8), (1, 5, 8), (1, 5, 8)]),
    ("attention_one_key", lambda q, k, v: nn.attention(q, k, v),
     lambda q, k, v: _softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v,
     [(2, 3, 4), (2, 1, 4), (2, 1, 4)]),
    # Empty operands: an empty result computes nothing; a non-empty one is
    # the value over no elements (all padding, a sum of 0, hidden keys' 0).
    ("attention_no_queries", lambda q, k, v: nn.attention(q, k, v, causal=True),
     lambda q, k, v: np.zeros(q.shape[:-1] + v.shape[-1:]), [(2, 0, 8), (2, 3, 8), (2, 3, 4)]),
    ("attention_no_keys", lambda q, k, v: nn.attention(q, k, v),
     lambda q, k, v: np.zeros(q.shape[:-1] + v.shape[-1:]), [(2, 3, 8), (2, 0, 8), (2, 0, 4)]),
    ("pad_of_empty", lambda x: nn.pad(x, low=(1, 2), high=(0, 3), value=1.5),
     lambda x: np.pad(x, ((1, 0), (2, 3)), constant_values=1.5), [(0, 16)]),
    ("conv2d_no_images", lambda x, w: nn.conv2d(x, w, padding=(1, 1, 1, 1)),
     lambda x, w: np.zeros((0, 3, 5, 5)), [(0, 2, 5, 5), (3, 2, 3, 3)]),
    ("conv2d_no_channels", lambda x, w, b: nn.conv2d(x, w, b),
     lambda x, w, b: np.broadcast_to(b[:, None, None], (2, 3, 3, 3)),
     [(2, 0, 5, 5), (3, 0, 3, 3), (3,)]),
]


@pytest.mark.parametrize("name,program,expected,shapes", CASES, ids=[c[0] for c in CASES])
def test_degenerate_dims(name, program, expected, shapes):
    rng = np.random.default_rng(len(name))
    arguments = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    got = lamina.jit(program)(*arguments)
    want = expected(*[a.astype(np.float64) for a in arguments])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
