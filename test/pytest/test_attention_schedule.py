"""Flash-style attention on the CPU matches a float64 NumPy attention:
lengths no tile divides (queries padded to the query tile, keys to a
multiple of 32, value columns to 16), head dims 16, 64 and 80, causal
attention with as many or fewer keys than queries, masks with -inf (rows
whose first key tile is all masked, rows masked whole), masks broadcast
over heads and over queries (padding masks), negative scales, f16 and
bf16, several batch dims and heads, one and two threads, and attention
between fused neighbours.

Tolerances are `lamina.reference.TOLERANCES` of the result's type: rtol
1e-4 and atol 1e-5 (times the largest expected magnitude) for f32, 1e-2
and 2e-3 for f16, 4e-2 and 2e-2 for bf16; a row masked whole gives 0
(as ONNX's Attention defines it)."""

import ml_dtypes
import numpy as np
import pytest

import lamina
from lamina.reference import compare, evaluate, random_inputs
from lamina.schedules import attention_tiles
from lamina.schedules.analysis import analyze
from lamina.schedules.attention import register_tiling
from lamina.targets.cpu_model import CPUModel

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def source(batch, sq, sk, d, dv, dtype="f32", causal=False, mask=None, scale=None):
    def t(*shape):
        return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"
    q, k, v, out = t(*batch, sq, d), t(*batch, sk, d), t(*batch, sk, dv), t(*batch, sq, dv)
    attributes = (["causal = true"] if causal else []) + (
        [f"scale = {scale} : f32"] if scale is not None else [])
    attrs = " {" + ", ".join(attributes) + "}" if attributes else ""
    arguments, operands, types = f"%q: {q}, %k: {k}, %v: {v}", "%q, %k, %v", f"{q}, {k}, {v}"
    if mask is not None:
        arguments += f", %m: {t(*mask)}"
        operands += ", %m"
        types += f", {t(*mask)}"
    return (f"func.func @main({arguments}) -> {out} {{\n"
            f"  %0 = \"nn.attention\"({operands}){attrs} : ({types}) -> {out}\n"
            f"  return %0 : {out}\n}}\n")


def attention(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + mask) v in float64; 0 for a query that sees
    no key."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + np.asarray(mask, np.float64)
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    peak = s.max(axis=-1, keepdims=True)
    p = np.exp(s - np.where(np.isneginf(peak), 0, peak))
    total = p.sum(axis=-1, keepdims=True)
    return (p / np.where(total == 0, 1, total)) @ v


def check(threads, masked_keys=None, seed=0, **shape):
    f = lamina.compile(source(**shape), target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=seed)
    if masked_keys is not None:
        mask = args[3].astype(np.float32)
        masked_keys(mask)
        args[3] = mask.astype(DTYPES[shape.get("dtype", "f32")])
    expected = attention(*args, causal=shape.get("causal", False), scale=shape.get("scale"))
    comparison = compare(f(*args), expected, shape.get("dtype", "f32"))
    assert comparison.ok, comparison


def mask_keys(mask):
    """-inf on every third key; for the first query, on every key of the
    first key tile (128) and after; the second query sees no key."""
    mask[..., ::3] = -np.inf
    mask[..., 0, :130] = -np.inf
    mask[..., 1, :] = -np.inf


@pytest.mark.parametrize("threads,shape", [
    (2, dict(batch=(2, 2), sq=100, sk=100, d=64, dv=64)),
    (1, dict(batch=(1, 3), sq=37, sk=37, d=16, dv=16, causal=True)),
    (2, dict(batch=(2,), sq=37, sk=100, d=80, dv=80)),
    (2, dict(batch=(2, 2), sq=100, sk=37, d=80, dv=24, causal=True)),
    (2, dict(batch=(2,), sq=100, sk=100, d=64, dv=64, dtype="f16", causal=True)),
    (2, dict(batch=(1, 8), sq=512, sk=512, d=64, dv=64)),
], ids=["s100", "s37-causal-1thread", "sk100-d80", "sq100-sk37-causal", "f16-causal",
        "bench"])
def test_flash_attention(threads, shape):
    check(threads, **shape)


@pytest.mark.parametrize("shape", [
    dict(batch=(2,), sq=40, sk=200, d=16, dv=24, mask=(40, 200)),
    dict(batch=(2, 3), sq=17, sk=130, d=16, dv=16, mask=(2, 1, 17, 130), scale=-0.7),
    dict(batch=(2,), sq=37, sk=200, d=80, dv=80, dtype="bf16", mask=(37, 200)),
], ids=["mask", "mask-over-heads-negative-scale", "bf16-mask"])
def test_masked_flash_attention(shape):
    check(2, masked_keys=mask_keys, seed=1, **shape)


def test_padding_mask_over_heads_and_queries():
    """A [B, 1, 1, Sk] mask (one row of keys per batch) is read as it is;
    the first batch's first 140 keys are masked (the first key tile whole)."""
    def mask_padding(mask):
        mask[..., ::3] = -np.inf
        mask[0, ..., :140] = -np.inf
    check(2, masked_keys=mask_padding, seed=3,
          batch=(3, 2), sq=20, sk=150, d=16, dv=16, mask=(3, 1, 1, 150))


def test_attention_between_fused_neighbours():
    text = """
func.func @main(%x: tensor<2x48x32xf32>, %k: tensor<2x70x32xf32>, %v: tensor<2x70x32xf32>)
    -> tensor<2x48x32xf32> {
  %s = "nn.mul"(%x, %x) : (tensor<2x48x32xf32>, tensor<2x48x32xf32>) -> tensor<2x48x32xf32>
  %q = "nn.relu"(%s) : (tensor<2x48x32xf32>) -> tensor<2x48x32xf32>
  %a = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x48x32xf32>, tensor<2x70x32xf32>,
      tensor<2x70x32xf32>) -> tensor<2x48x32xf32>
  %r = "nn.add"(%a, %x) : (tensor<2x48x32xf32>, tensor<2x48x32xf32>) -> tensor<2x48x32xf32>
  %o = "nn.softmax"(%r) {axis = -1 : i64} : (tensor<2x48x32xf32>) -> tensor<2x48x32xf32>
  return %o : tensor<2x48x32xf32>
}"""
    f = lamina.compile(text, target="cpu:threads=2")
    x, k, v = random_inputs(f.inputs, seed=2)
    r = attention(np.maximum(x * x, 0), k, v, causal=True) + x
    expected = np.exp(r - r.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    comparison = compare(f(x, k, v), expected, "f32")
    assert comparison.ok, comparison
    assert compare(f(x, k, v), evaluate(lamina.parse(text), [x, k, v])[0], "f32").ok


def test_tiles_follow_the_registers():
    assert attention_tiles(CPUModel(vector_bits=512, vector_registers=32)) == (8, 128)
    assert attention_tiles(CPUModel(vector_bits=256, vector_registers=16)) == (4, 128)


PRODUCT = """
func.func @product(%a: tensor<8x{k}xf32>, %b: tensor<{k}x{n}xf32>,
                    %c: tensor<8x{n}xf32>) -> tensor<8x{n}xf32> {{
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j, d) -> (i, d)>,
                                        affine_map<(i, j, d) -> (d, j)>,
                                        affine_map<(i, j, d) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%a, %b : tensor<8x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<8x{n}xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<8x{n}xf32>
  return %r : tensor<8x{n}xf32>
}}
"""


@pytest.mark.parametrize("n,k,tile", [(128, 64, (0, 32, 1)), (80, 128, (0, 16, 1)),
                                      (32, 128, (0, 0, 1)), (24, 128, None)])
def test_register_tile_of_a_loop_body_product(n, k, tile):
    """Two vectors of columns (one when two do not divide them, the whole
    when they are all), one step of the reduction; none for columns that
    are not a multiple of a vector."""
    module = lamina.parse(PRODUCT.format(n=n, k=k))
    function = module.body.operations[0]
    generic = next(o for o in function.regions[0].blocks[0].operations
                   if o.operation.name == "linalg.generic")
    tiling = register_tiling(analyze(generic.operation), CPUModel(vector_bits=512))
    assert (tiling.vector_tile if tiling else None) == tile
    assert tiling is None or tiling.accumulate
