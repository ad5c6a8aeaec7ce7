"""Decomposed and fused programs still compute what their nn references do.

Each program is compiled for the CPU with the default pipeline (whose
`fused` stage runs nn-decompose and nn-fuse) or with attention decomposed
too, run on random inputs and compared with `lamina.reference.evaluate` of
the original program; the reference interpreter also runs the program as
the `fused` stage leaves it (nn.fused calling its outlined functions).

Tolerances are `lamina.reference.compare`'s per element type (f32: rtol
1e-4, atol 1e-5 scaled by the largest expected magnitude; f16 and bf16
wider): decompositions compute in f32 and round once, as the references do,
so only summation order and rsqrt-versus-division differ.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import lamina
from lamina.pipeline import Pipeline
from lamina.reference import compare, evaluate, random_inputs
from lamina.runtime import find_entry, signature

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))


def unary(op: str, shape: str, attrs: str = "", dtype: str = "f32") -> str:
    t = f"tensor<{shape}x{dtype}>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = "nn.{op}"(%x) {attrs} : ({t}) -> {t}
  return %y : {t}
}}"""


def normalization(op: str, shape: str, param: str, attrs: str = "", dtype: str = "f32") -> str:
    t, p = f"tensor<{shape}x{dtype}>", f"tensor<{param}x{dtype}>"
    extra = f", %b: {p}" if op == "layer_norm" else ""
    operands = "%x, %g, %b" if op == "layer_norm" else "%x, %g"
    types = f"{t}, {p}, {p}" if op == "layer_norm" else f"{t}, {p}"
    return f"""
func.func @main(%x: {t}, %g: {p}{extra}) -> {t} {{
  %y = "nn.{op}"({operands}) {attrs} : ({types}) -> {t}
  return %y : {t}
}}"""


ATTENTION = """
func.func @main(%q: tensor<2x6x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x5xf32>,
                %m: tensor<6x7xf32>) -> tensor<2x6x5xf32> {
  %o = "nn.attention"(%q, %k, %v, %m) {causal = true}
      : (tensor<2x6x8xf32>, tensor<2x7x8xf32>, tensor<2x7x5xf32>, tensor<6x7xf32>) -> tensor<2x6x5xf32>
  return %o : tensor<2x6x5xf32>
}"""

DECOMPOSED = {
    "softmax": unary("softmax", "3x17"),
    "softmax_axis0": unary("softmax", "5x3x4", "{axis = 0 : i64}"),
    "softmax_f16": unary("softmax", "4x9", dtype="f16"),
    "log_softmax": unary("log_softmax", "3x17"),
    "gelu": unary("gelu", "64"),
    "gelu_tanh_bf16": unary("gelu", "64", '{approximate = "tanh"}', dtype="bf16"),
    "silu": unary("silu", "5x7"),
    "layer_norm": normalization("layer_norm", "3x4x10", "4x10", "{axis = 1 : i64}"),
    "layer_norm_f16": normalization("layer_norm", "3x16", "16", dtype="f16"),
    "rms_norm": normalization("rms_norm", "6x12", "12", "{epsilon = 1.0e-3 : f32}"),
    "attention": ATTENTION,
}

FUSED = {
    "elementwise_chain": """
func.func @main(%x: tensor<16x32xf32>, %a: tensor<32xf32>, %b: tensor<16x1xf32>) -> tensor<16x32xf32> {
  %0 = "nn.mul"(%x, %a) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %1 = "nn.add"(%0, %b) : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
  %2 = "nn.relu"(%1) : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %3 = "nn.mul"(%2, %x) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}""",
    "multi_output": """
func.func @main(%x: tensor<8x5xf32>, %y: tensor<5xf32>) -> (tensor<8x5xf32>, tensor<8x5xf32>, tensor<5x8xf32>) {
  %0 = "nn.sub"(%x, %y) : (tensor<8x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %1 = "nn.tanh"(%0) : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %2 = "nn.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<8x5xf32>) -> tensor<5x8xf32>
  return %0, %1, %2 : tensor<8x5xf32>, tensor<8x5xf32>, tensor<5x8xf32>
}""",
    "matmul_epilogue_cast": """
func.func @main(%x: tensor<6x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>,
                %r: tensor<6x12xf32>) -> tensor<6x12xf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<6x16xf32>, tensor<16x12xf32>) -> tensor<6x12xf32>
  %1 = "nn.add"(%0, %b) : (tensor<6x12xf32>, tensor<12xf32>) -> tensor<6x12xf32>
  %2 = "nn.silu"(%1) : (tensor<6x12xf32>) -> tensor<6x12xf32>
  %3 = "nn.add"(%2, %r) : (tensor<6x12xf32>, tensor<6x12xf32>) -> tensor<6x12xf32>
  %4 = "nn.cast"(%3) : (tensor<6x12xf32>) -> tensor<6x12xf16>
  return %4 : tensor<6x12xf16>
}""",
    "matmul_used_by_several_groups": """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %m = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = "nn.relu"(%m) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "nn.softmax"(%m) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %r, %s, %t : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}""",
    "reduction_with_producers_and_rows": """
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>) {
  %d = "nn.sub"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = "nn.mul"(%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "nn.reduce_sum"(%sq) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  %n = "nn.sqrt"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %q = "nn.div"(%d, %n) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %n, %q : tensor<8xf32>, tensor<4x8xf32>
}""",
    "conv_pool_epilogues": """
func.func @main(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %c = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
  %r = "nn.gelu"(%c) : (tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %p = "nn.avg_pool2d"(%r) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
  %n = "nn.neg"(%p) : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %n : tensor<1x4x3x3xf32>
}""",
}


def decomposing_attention() -> Pipeline:
    pipe = Pipeline.for_target("cpu")
    pipe.replace("nn-decompose", "nn-decompose{keep-attention=false}")
    return pipe


def check(text: str, pipeline: Pipeline | None = None, seed: int = 0) -> None:
    """Compiled results, and the reference interpreter on the fused
    program, against the reference of the original program."""
    module = lamina.parse(text)
    arguments, _ = signature(find_entry(module))
    inputs = random_inputs(arguments, seed)
    expected = evaluate(module, inputs)
    compiled = lamina.compile(module, pipeline=pipeline)
    results = compiled(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    fused = (pipeline or Pipeline.for_target("cpu")).run(lamina.parse(text), until="fused")
    assert "nn.fused" in str(fused)
    for got, via_fused, want in zip(results, evaluate(fused, inputs), expected, strict=True):
        report = compare(np.asarray(got), want)
        assert report.ok, report
        assert compare(via_fused, want).ok


@pytest.mark.parametrize("name", sorted(DECOMPOSED))
def test_decomposed_composites_match_their_references(name):
    check(DECOMPOSED[name], decomposing_attention())


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_programs_match_the_reference(name):
    check(FUSED[name])


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
@pytest.mark.parametrize("attention", ["kept", "decomposed"])
def test_examples_fused(path, attention):
    with open(path) as f:
        text = f.read()
    check(text, decomposing_attention() if attention == "decomposed" else None, seed=3)
