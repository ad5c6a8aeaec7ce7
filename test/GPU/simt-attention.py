# RUN: %PYTHON %s | FileCheck %s
#
# The flash-attention kernels of nn.attention, run thread by thread (the
# `gpu` stage interpreted with warp-level ldmatrix, mma.sync and shuffles
# as the PTX ISA defines them, Inputs/simt.py) and compared with the nn
# reference: the distribution of the scores, row statistics and output
# over the warps (each warp whole rows, each row's four threads folding by
# shuffles), the scores' B^T fragments loaded by ldmatrix untransposed,
# the masks and the f32 FMA loop; on sm_90a, the TMA loads into swizzled
# tiles (a ring of K and V stages) and the wgmmas that read them through
# matrix descriptors, P from the lanes' registers. Tolerances against the
# f32 NumPy reference: 1e-2 of the largest output for f16, 4e-2 for bf16,
# 1e-5 for f32.

import os
import sys

import numpy as np

import lamina
from lamina.dialects import nn
from lamina.targets import get_target
from lamina.types import numpy_dtype

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import simt  # noqa: E402

TARGETS = {chip: get_target(f"cuda:{chip}") for chip in ("sm_80", "sm_90a")}
RNG = np.random.default_rng(7)


def attention(batch, queries, keys, depth, value_depth, dtype, causal=False, mask=None,
              chip="sm_80"):
    shape = lambda rows, cols: "x".join(map(str, batch + (rows, cols))) + "x" + dtype  # noqa: E731
    q, k, v, o = (shape(queries, depth), shape(keys, depth), shape(keys, value_depth),
                  shape(queries, value_depth))
    mask_type = "x".join(map(str, mask)) + "x" + dtype if mask else None
    types = [q, k, v] + ([mask_type] if mask else [])
    arguments = ", ".join(f"%a{i}: tensor<{t}>" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(types)))
    attributes = " {causal = true}" if causal else ""
    text = (f"func.func @main({arguments}) -> tensor<{o}> {{\n"
            f"  %o = \"nn.attention\"({operands}){attributes} : "
            f"({', '.join(f'tensor<{t}>' for t in types)}) -> tensor<{o}>\n"
            f"  return %o : tensor<{o}>\n}}\n")
    numpy = numpy_dtype(dtype)
    arrays = [RNG.uniform(-1, 1, batch + (queries, depth)),
              RNG.uniform(-1, 1, batch + (keys, depth)),
              RNG.uniform(-1, 1, batch + (keys, value_depth))]
    if mask:
        hidden = RNG.uniform(0, 1, mask) < 0.3
        hidden[..., 0, :] = True   # a query whose keys are all hidden gives 0
        arrays.append(np.where(hidden, -np.inf, RNG.uniform(-1, 1, mask)))
    arrays = [a.astype(numpy) for a in arrays]
    out = np.zeros(batch + (queries, value_depth), numpy)
    module = TARGETS[chip].emit(lamina.parse(text), "gpu")
    if chip == "sm_90a":
        assert "wgmma.mma_async" in str(module) and "nvgpu.tma.async.load" in str(module)
    simt.launch(module, arrays + [out])
    view = nn.AttentionOp.detached(causal=causal)
    want = view.reference(*arrays, *([None] if not mask else []))
    rtol = {"f16": 1e-2, "bf16": 4e-2, "f32": 1e-5}[dtype]
    error = np.abs(out.astype(np.float64) - want.astype(np.float64)).max()
    scale = max(np.abs(want.astype(np.float64)).max(), 1.0)
    print(f"{'matches' if error <= rtol * scale else 'DIFFERS'} "
          f"(max abs error {error:.3g}, {out.size} elements)")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


# f16 and bf16 on tensor cores: sizes no tile divides, causal (a loop over
# two key tiles, the diagonal's masked, the one past it skipped), a mask
# with hidden keys (a query with all of them hidden), Dv != D.
# CHECK-LABEL: TEST: tensor_cores
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def tensor_cores():
    attention((2,), 37, 37, 64, 64, "f16", causal=True)
    attention((1, 2), 128, 128, 64, 64, "f16", causal=True)
    attention((1,), 70, 45, 32, 24, "bf16", mask=(1, 70, 45))
    attention((), 1, 1, 16, 16, "f16")


# f32 on CUDA cores (fused multiply-adds), causal and masked.
# CHECK-LABEL: TEST: cuda_cores
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def cuda_cores():
    attention((1, 2), 16, 16, 16, 16, "f32", causal=True)
    attention((1,), 37, 50, 20, 12, "f32", mask=(37, 50))


# sm_90a: TMA and wgmma. Five key steps of 64 through a ring of three
# stages (its parity flipping), sizes no tile divides; D = 128 in two
# swizzled boxes along K and Dv = 128 in two along N, batched (3-d
# descriptors), causal, bf16; a mask with hidden keys, D = 32 and Dv = 40
# padded to whole boxes; a mask whose rows (45 f16) synchronous copies
# load; one query and one key.
# CHECK-LABEL: TEST: wgmma
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def wgmma():
    attention((2,), 150, 300, 64, 64, "f16", chip="sm_90a")
    attention((2,), 100, 100, 128, 128, "bf16", causal=True, chip="sm_90a")
    attention((1, 2), 70, 130, 32, 40, "f16", mask=(1, 70, 130), chip="sm_90a")
    attention((), 37, 45, 64, 64, "f16", mask=(37, 45), chip="sm_90a")
    attention((), 1, 1, 16, 16, "f16", chip="sm_90a")
