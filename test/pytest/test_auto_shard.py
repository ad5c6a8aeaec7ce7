"""The sharding cost model of nn-auto-shard: reported bytes against the
ring formulas by hand, the choice where the strategies differ, the
fallback, the options, and the Python API."""

from fractions import Fraction

import numpy as np
import pytest

import lamina
from lamina.diagnostics import CompileError
from lamina.pass_registry import OptionError, get_pass
from lamina.sharding_cost import (Access, Program, Step, Tensor, all_gather_bytes,
                                  all_reduce_bytes, evaluate)

F32 = 4


def mlp(batch: int, d: int, hidden: int) -> str:
    return f"""
func.func @mlp(%x: tensor<{batch}x{d}xf32>, %w1: tensor<{d}x{hidden}xf32>, %b1: tensor<{hidden}xf32>, %w2: tensor<{hidden}x{d}xf32>) -> tensor<{batch}x{d}xf32> {{
  %h = "nn.matmul"(%x, %w1) : (tensor<{batch}x{d}xf32>, tensor<{d}x{hidden}xf32>) -> tensor<{batch}x{hidden}xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<{batch}x{hidden}xf32>, tensor<{hidden}xf32>) -> tensor<{batch}x{hidden}xf32>
  %r = "nn.relu"(%hb) : (tensor<{batch}x{hidden}xf32>) -> tensor<{batch}x{hidden}xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<{batch}x{hidden}xf32>, tensor<{hidden}x{d}xf32>) -> tensor<{batch}x{d}xf32>
  return %y : tensor<{batch}x{d}xf32>
}}
"""


ATTENTION = """
func.func @attention(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}
"""


def plans(text: str, **options):
    _, report = lamina.auto_shard(text, **options)
    (function,) = report.functions
    return function.chosen, {p.strategy: p for p in function.candidates}


@pytest.mark.parametrize("grid", [2, 4])
@pytest.mark.parametrize("batch", [4, 64])
def test_mlp_bytes_are_the_ring_formulas(grid, batch):
    d, hidden = 16, 32
    chosen, by_name = plans(mlp(batch, d, hidden), grid=grid)
    n = Fraction(grid)
    weights = (d * hidden + hidden + hidden * d) * F32
    result = batch * d * F32
    # Megatron: one all-reduce of the result, 2 (n-1)/n * size.
    assert by_name["tensor-parallel"].bytes == 2 * (n - 1) / n * result
    assert [c.kind for c in by_name["tensor-parallel"].collectives] == ["all_reduce"]
    # Data parallel and replicated gather every stored weight, (n-1)/n * size each.
    assert by_name["data-parallel"].bytes == (n - 1) / n * weights
    assert by_name["replicated"].bytes == (n - 1) / n * weights
    assert not by_name["sequence-parallel"].applicable
    expected = "tensor-parallel" if 2 * result < weights else "data-parallel"
    assert chosen.strategy == expected
    assert chosen.bytes == min(p.bytes for p in by_name.values() if p.applicable)


def test_choice_flips_with_the_batch():
    """Small batch, large weights: tensor parallel; large batch, small
    weights: data parallel."""
    assert plans(mlp(2, 64, 256), grid=2)[0].strategy == "tensor-parallel"
    assert plans(mlp(512, 8, 8), grid=2)[0].strategy == "data-parallel"


def test_grid_of_three_counts_fractions_of_bytes():
    chosen, by_name = plans(mlp(3, 6, 12), grid=3)
    assert by_name["tensor-parallel"].bytes == Fraction(2 * 2, 3) * 3 * 6 * F32
    assert by_name["data-parallel"].bytes == Fraction(2, 3) * (6 * 12 + 12 + 12 * 6) * F32


def test_replicated_weights_make_data_parallel_free():
    chosen, by_name = plans(mlp(4, 16, 32), grid=2, weights="replicated")
    assert chosen.strategy == "data-parallel"
    assert chosen.bytes == 0
    assert by_name["tensor-parallel"].bytes == all_reduce_bytes(4 * 16 * F32, 2)


def test_tie_goes_to_less_memory_per_device():
    chosen, by_name = plans(mlp(64, 16, 32), grid=2)
    assert by_name["replicated"].bytes == by_name["data-parallel"].bytes
    assert by_name["data-parallel"].memory < by_name["replicated"].memory
    assert chosen.strategy == "data-parallel"


def test_sequence_parallel_attention_gathers_keys_and_values():
    chosen, by_name = plans(ATTENTION, grid=2)
    size = 4 * 8 * 16 * F32
    assert by_name["sequence-parallel"].bytes == 2 * all_gather_bytes(size, 2)
    assert [(c.kind, c.tensor) for c in by_name["sequence-parallel"].collectives] == [
        ("all_gather", "%arg1"), ("all_gather", "%arg2")]
    assert by_name["data-parallel"].bytes == 0
    assert chosen.strategy == "data-parallel"


def test_indivisible_grid_falls_back_to_replicated():
    chosen, by_name = plans(mlp(3, 5, 7), grid=2)
    assert chosen.strategy == "replicated"
    assert chosen.bytes == 0
    assert "not divisible by the grid (2)" in by_name["data-parallel"].reason
    assert not by_name["tensor-parallel"].applicable


def test_model_without_mlir():
    """A column-then-row pair built by hand: x[8,4] @ w1[4,6] @ w2[6,4]."""
    tensors = [Tensor("x", (8, 4), F32, argument=True),
               Tensor("w1", (4, 6), F32, argument=True, parameter=True),
               Tensor("w2", (6, 4), F32, argument=True, parameter=True),
               Tensor("h", (8, 6), F32), Tensor("y", (8, 4), F32)]
    matmul = dict(splittable=frozenset({0, 1, 2}), reductions=frozenset({2}), contraction=True)
    steps = [Step("matmul", (8, 6, 4), operands=(Access(0, (0, 2)), Access(1, (2, 1))),
                  results=(Access(3, (0, 1)),), **matmul),
             Step("matmul", (8, 4, 6), operands=(Access(3, (0, 2)), Access(2, (2, 1))),
                  results=(Access(4, (0, 1)),), **matmul)]
    program = Program("pair", tensors, steps, outputs=[4])
    plan = evaluate(program, "tensor-parallel", 2)
    assert plan.shardings == {0: None, 1: 1, 2: 0, 3: 1, 4: "partial"}
    assert plan.outputs == [None]
    assert plan.bytes == all_reduce_bytes(8 * 4 * F32, 2)
    assert evaluate(program, "data-parallel", 2).bytes == all_gather_bytes((24 + 24) * F32, 2)


def test_api_annotates_a_copy():
    module = lamina.parse(mlp(4, 16, 32))
    before = str(module)
    annotated, report = lamina.auto_shard(module, grid=2)
    assert str(module) == before
    text = str(annotated)
    assert "shard.grid @grid(shape = 2)" in text
    assert 'lamina.sharding_strategy = "tensor-parallel"' in text
    assert "split_axes = [[], [0]]" in text
    assert str(report).startswith("nn-auto-shard: @mlp on a grid of 2: tensor-parallel, 256 bytes")


def test_annotated_program_computes_the_same_in_one_process():
    text = mlp(4, 16, 32)
    annotated, _ = lamina.auto_shard(text, grid=2)
    rng = np.random.default_rng(0)
    x, w1, b1, w2 = (rng.standard_normal(s).astype(np.float32)
                     for s in [(4, 16), (16, 32), (32,), (32, 16)])
    expected = np.maximum(x @ w1 + b1, 0) @ w2
    np.testing.assert_allclose(lamina.compile(annotated)(x, w1, b1, w2), expected,
                               rtol=1e-5, atol=1e-5)


def test_strategy_that_does_not_apply_is_a_located_error():
    with pytest.raises(CompileError, match="strategy 'tensor-parallel' does not apply to "
                                           "@attention: no matmul reads a parameter"):
        lamina.auto_shard(ATTENTION, grid=2, strategy="tensor-parallel")


@pytest.mark.parametrize("options, message", [
    ("grid=0", "must be >= 1"),
    ("weights=everywhere", "must be 'sharded' or 'replicated'"),
    ("strategy=pipeline", "must be one of auto, replicated"),
])
def test_bad_options(options, message):
    with pytest.raises(OptionError, match=message):
        get_pass("nn-auto-shard", options)
