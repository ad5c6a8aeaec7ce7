"""Scheduled programs match NumPy: packed matmuls of sizes no tile
divides, batched and transposed contractions, f16/bf16, fused row groups,
one and several threads; the kinds' choices as data (convolutions:
test_conv_schedule.py), and a kind registered by a user."""

from dataclasses import dataclass
from typing import ClassVar

import ml_dtypes
import numpy as np
import pytest

import lamina
from lamina.reference import compare, evaluate, random_inputs
from lamina.passes.cpu_apply_schedule import CPUApplySchedule
from lamina.schedules import KINDS, choose_schedules, register_kind, render, transforms
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import LoopNestKind
from lamina.schedules.contraction import ContractionSchedule, ContractionWithEpilogue
from lamina.targets.cpu_model import CPUModel

MATMUL = """
func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %0 = "nn.matmul"(%a, %b) : (tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  return %0 : tensor<{m}x{n}x{t}>
}}
"""

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def check(source: str, threads: int = 1, seed: int = 0):
    f = lamina.compile(source, target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=seed)
    actual = f(*args)
    expected = evaluate(lamina.parse(source), args)
    for a, e, t in zip(actual if isinstance(actual, tuple) else (actual,), expected, f.results):
        comparison = compare(a, e, t.dtype)
        assert comparison.ok, str(comparison)


@pytest.mark.parametrize("m,n,k", [(67, 129, 33), (8, 32, 1), (1, 1, 1), (5, 300, 17),
                                   (256, 64, 300), (24, 96, 520)])
@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_sizes_tiles_do_not_divide(m, n, k, threads):
    check(MATMUL.format(m=m, n=n, k=k, t="f32"), threads)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_matmul_narrow_floats(dtype):
    check(MATMUL.format(m=67, n=129, k=33, t=dtype), threads=2)


def test_batched_and_transposed_contractions():
    check("""
func.func @main(%q: tensor<2x3x40x16xf32>, %k: tensor<2x3x24x16xf32>, %v: tensor<2x3x24x16xf32>)
    -> tensor<2x3x40x16xf32> {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x3x40x16xf32>, tensor<2x3x24x16xf32>,
      tensor<2x3x24x16xf32>) -> tensor<2x3x40x16xf32>
  return %0 : tensor<2x3x40x16xf32>
}""", threads=2)


def test_matmul_with_epilogue_and_row_groups():
    check("""
func.func @main(%x: tensor<48x64xf32>, %w: tensor<64x96xf32>, %b: tensor<96xf32>,
                %g: tensor<96xf32>, %beta: tensor<96xf32>) -> (tensor<48x96xf32>, tensor<48x96xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<48x64xf32>, tensor<64x96xf32>) -> tensor<48x96xf32>
  %1 = "nn.add"(%0, %b) : (tensor<48x96xf32>, tensor<96xf32>) -> tensor<48x96xf32>
  %2 = "nn.gelu"(%1) : (tensor<48x96xf32>) -> tensor<48x96xf32>
  %3 = "nn.softmax"(%2) {axis = -1 : i64} : (tensor<48x96xf32>) -> tensor<48x96xf32>
  %4 = "nn.layer_norm"(%2, %g, %beta) : (tensor<48x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<48x96xf32>
  return %3, %4 : tensor<48x96xf32>, tensor<48x96xf32>
}""", threads=2)


def test_column_reduction_is_not_fused_into_rows():
    check("""
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %m = "nn.reduce_mean"(%x) {axes = array<i64: 0>, keepdims = true} : (tensor<64x128xf32>) -> tensor<1x128xf32>
  %0 = "nn.sub"(%x, %m) : (tensor<64x128xf32>, tensor<1x128xf32>) -> tensor<64x128xf32>
  %1 = "nn.exp"(%0) : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}""", threads=2)


def test_column_results_with_a_unit_dim_are_not_fused_into_columns():
    # The softmax's column statistics ([1, 65], a unit dim the root lacks)
    # feed a column sum ([65]) whose loop the threads split: they are not
    # the root's rows and stay loop nests of their own (lamina-fuzz --seed
    # 13, program 531, once failed to schedule).
    check("""
func.func @main(%x: tensor<2x65xf16>) -> (tensor<65xf16>, tensor<2x65xf16>) {
  %0 = "nn.softmax"(%x) {axis = -2 : i64} : (tensor<2x65xf16>) -> tensor<2x65xf16>
  %1 = "nn.mul"(%0, %0) : (tensor<2x65xf16>, tensor<2x65xf16>) -> tensor<2x65xf16>
  %2 = "nn.reduce_sum"(%1) {axes = array<i64: 0>, keepdims = false} : (tensor<2x65xf16>) -> tensor<65xf16>
  return %2, %0 : tensor<65xf16>, tensor<2x65xf16>
}""", threads=2)


def test_schedules_are_data():
    module = lamina.parse(MATMUL.format(m=512, n=512, k=512, t="f32"))
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    schedules = choose_schedules(module.operation, CPUModel(threads=2))
    (matmul,) = [s for s in schedules if s.kind == "contraction"]
    assert isinstance(matmul, ContractionSchedule)
    # B packed in panels of two AVX-512 vectors, moved before k.
    assert matmul.packing.packed_sizes == (0, 32, 0)
    assert matmul.packing.b_outer_perm == (1, 0)
    # Threads share B's 16 panels; 8x32 register tile.
    assert matmul.threads == (0, 8, 0, 0)
    assert matmul.tile_sizes[-1] == (8, 1, 1, 0)
    assert "packing [0, 32, 0]" in matmul.describe()


RELU = """
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = "nn.relu"(%x) : (tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
"""


@dataclass(frozen=True)
class WholeVector(Schedule):
    """A test kind's schedule: the root vectorised whole, in one step."""

    kind: ClassVar[str] = "whole-vector"

    def render(self, root):
        transforms.vectorize(transforms.match_tag(root, self.root))


class WholeVectorKind(ScheduleKind):
    """Groups of one elementwise op."""

    name = "whole-vector"

    def choose(self, group, model):
        if len(group.ops) != 1 or any(group.ops[0].reduction):
            return None
        return [WholeVector(group=group.name, root=group.root.tag)]


def test_a_registered_kind_is_asked_before_loop_nests():
    module = lamina.parse(RELU)
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    kind = register_kind(WholeVectorKind())
    try:
        assert KINDS[-2] is kind and isinstance(KINDS[-1], LoopNestKind)
        schedules = choose_schedules(module.operation, CPUModel(threads=2))
    finally:
        KINDS.remove(kind)
    assert [s.describe() for s in schedules] == ["main_op0: whole-vector, root main_op0/0"]
    render(schedules, module.body)
    assert CPUApplySchedule().apply(module.operation)
    code = str(module)
    assert "vector<16x32xf32>" in code and "scf.for" not in code and "linalg.generic" not in code
    # Without it, the group is a loop nest again.
    module = lamina.parse(RELU)
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    (schedule,) = choose_schedules(module.operation, CPUModel(threads=2))
    assert schedule.kind == "loop-nest"


def test_threads_option_and_environment(monkeypatch):
    assert lamina.get_target("cpu:threads=3").threads == 3
    monkeypatch.setenv("LAMINA_NUM_THREADS", "5")
    assert lamina.get_target("cpu").threads == 5
    with pytest.raises(ValueError, match="threads"):
        lamina.get_target("cpu:threads=two")
    one = lamina.get_target("cpu:threads=1")
    assert not any("libomp" in path for path in one.runtime_libraries())
    assert any("libomp" in path for path in lamina.get_target("cpu:threads=2").runtime_libraries())


ATTENTION = """
func.func @main(%q: tensor<2x40x16xf32>, %k: tensor<2x72x16xf32>, %v: tensor<2x72x24xf32>) -> tensor<2x40x24xf32> {{
  %0 = "nn.attention"(%q, %k, %v) {{{attributes}}} : (tensor<2x40x16xf32>, tensor<2x72x16xf32>,
      tensor<2x72x24xf32>) -> tensor<2x40x24xf32>
  return %0 : tensor<2x40x24xf32>
}}
"""


# A positive scale is applied inside exp (the row maximum taken on the raw
# scores); a negative one, causality and masks scale the scores first.
@pytest.mark.parametrize("attributes", ["", "scale = 3.0 : f32", "scale = -0.7 : f32",
                                        "causal = true"])
def test_kept_attention(attributes):
    check(ATTENTION.format(attributes=attributes), threads=2, seed=3)


EPILOGUE = """
func.func @main(%x: tensor<{m}x{k}xf32>, %w: tensor<{k}x{n}xf32>, %b: tensor<{n}xf32>,
                %r: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}x{t}> {{
  %0 = "nn.matmul"(%x, %w) : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %1 = "nn.add"(%0, %b) : (tensor<{m}x{n}xf32>, tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
  %2 = {activation}
  %3 = "nn.add"(%2, %r) : (tensor<{m}x{n}xf32>, tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %4 = "nn.cast"(%3) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}x{t}>
  return %4 : tensor<{m}x{n}x{t}>
}}
"""

ACTIVATIONS = {
    "relu": '"nn.relu"(%1) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>',
    "gelu": '"nn.gelu"(%1) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>',
    "gelu_tanh": '"nn.gelu"(%1) {{approximate = "tanh"}} : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>',
}


def epilogue_source(m, n, k, activation="relu", t="f32"):
    body = EPILOGUE.replace("{activation}", ACTIVATIONS[activation])
    return body.format(m=m, n=n, k=k, t=t)


def epilogue_schedule(source: str, threads: int) -> ContractionSchedule:
    module = lamina.parse(source)
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    contraction = [s for s in choose_schedules(module.operation, CPUModel(threads=threads))
                   if s.kind == "contraction"]
    assert len(contraction) == 1
    return contraction[0]


# Bias, activation, residual and cast: compare() holds f32 results to
# rtol 1e-4 and bf16/f16 ones to their own precision (lamina.reference).
@pytest.mark.parametrize("activation,t,threads", [("relu", "f32", 2), ("gelu", "bf16", 2),
                                                  ("gelu_tanh", "f16", 2), ("relu", "f32", 1)])
def test_epilogue_in_the_contraction_loops(activation, t, threads):
    source = epilogue_source(64, 256, 48, activation, t)
    schedule = epilogue_schedule(source, threads)
    # The elementwise ops are one generic by now; threads share its columns.
    assert isinstance(schedule, ContractionWithEpilogue) and len(schedule.epilogue) == 1
    assert schedule.epilogue_tiles[0] == ((0, 128) if threads == 2 else (0, 0))
    check(source, threads)


@pytest.mark.parametrize("m,n,k", [(67, 129, 33), (24, 40, 8)])
def test_epilogue_where_blocks_do_not_divide(m, n, k):
    """The epilogue keeps a loop nest of its own when the result's blocks
    would not divide it."""
    source = epilogue_source(m, n, k, "gelu", "f32")
    assert not isinstance(epilogue_schedule(source, threads=2), ContractionWithEpilogue)
    check(source, threads=2)


def test_batched_epilogue():
    source = """
func.func @main(%x: tensor<4x32x16xf32>, %w: tensor<4x16x64xf32>, %r: tensor<4x32x64xf32>)
    -> tensor<4x32x64xbf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x32x16xf32>, tensor<4x16x64xf32>) -> tensor<4x32x64xf32>
  %1 = "nn.relu"(%0) : (tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %2 = "nn.add"(%1, %r) : (tensor<4x32x64xf32>, tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %3 = "nn.cast"(%2) : (tensor<4x32x64xf32>) -> tensor<4x32x64xbf16>
  return %3 : tensor<4x32x64xbf16>
}"""
    assert isinstance(epilogue_schedule(source, threads=2), ContractionWithEpilogue)
    check(source, threads=2)


def linear_source(x: tuple[int, ...], w: tuple[int, ...], epilogue: str = "") -> str:
    """`x @ w` on tensors of shapes `x` and `w` (batch dims on either or
    both), then `epilogue`: "bias_gelu" (a bias over the columns and
    gelu, a transformer's MLP) or "residual" (plus an input of the
    result's shape)."""
    def t(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    batch = x[:-2] if len(x) >= len(w) else w[:-2]
    y = batch + (x[-2], w[-1])
    arguments = [f"%x: {t(x)}", f"%w: {t(w)}"]
    body = [f'  %0 = "nn.matmul"(%x, %w) : ({t(x)}, {t(w)}) -> {t(y)}']
    if epilogue == "bias_gelu":
        arguments.append(f"%b: {t(y[-1:])}")
        body += [f'  %1 = "nn.add"(%0, %b) : ({t(y)}, {t(y[-1:])}) -> {t(y)}',
                 f'  %2 = "nn.gelu"(%1) : ({t(y)}) -> {t(y)}']
    elif epilogue == "residual":
        arguments.append(f"%r: {t(y)}")
        body += [f'  %1 = "nn.add"(%0, %r) : ({t(y)}, {t(y)}) -> {t(y)}']
    result = f"%{len(body) - 1}"
    return (f"func.func @main({', '.join(arguments)}) -> {t(y)} {{\n" + "\n".join(body)
            + f"\n  return {result} : {t(y)}\n}}\n")


# Every layout of batch dims a linear layer or a batched product has:
# tokens on activations [batch, tokens, features] times a weight shared by
# every batch (the generic that reshape propagation leaves of nn.matmul's
# collapsed rows), a weight per batch, both operands batched, unit dims
# (single rows in a batch of 5 are a matrix-vector product:
# test_matrix_vector.py).
LAYOUTS = {
    "activations_batch1": ((1, 37, 48), (48, 96)),
    "activations_batch3": ((3, 37, 48), (48, 96)),
    "activations_two_batch_dims": ((2, 3, 16, 48), (48, 64)),
    "unit_batch_inside": ((3, 1, 24, 48), (48, 64)),
    "weights_batch": ((37, 48), (3, 48, 96)),
    "both_batch": ((3, 37, 48), (3, 48, 96)),
    "both_unit_batch": ((1, 37, 48), (1, 48, 96)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("threads", [1, 2])
def test_linear_layers_on_batched_activations_are_packed(layout, threads):
    """Each layout is a packed contraction whose rows and columns are the
    2-D matmul's (not a unit dim), and computes what NumPy does."""
    x, w = LAYOUTS[layout]
    source = linear_source(x, w)
    schedule = epilogue_schedule(source, threads)
    packed = [size for size in schedule.packing.packed_sizes if size]
    assert packed[-1] == 2 * CPUModel().lanes
    check(source, threads)


@pytest.mark.parametrize("x,epilogue,fused", [((4, 64, 48), "bias_gelu", True),
                                              ((1, 64, 48), "residual", True),
                                              ((3, 37, 48), "bias_gelu", False)])
def test_linear_layers_on_batched_activations_with_epilogues(x, epilogue, fused):
    """A transformer's MLP (bias and gelu) and a residual add on batched
    activations: the epilogue runs in the packed contraction's blocks
    where they divide the result (64 rows), in a loop nest of its own
    otherwise (37 rows pack A)."""
    source = linear_source(x, (48, 256), epilogue)
    schedule = epilogue_schedule(source, threads=2)
    assert isinstance(schedule, ContractionWithEpilogue) == fused
    check(source, threads=2)
