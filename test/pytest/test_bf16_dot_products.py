"""bf16 contractions with AVX512-BF16's dot products: which targets take
them (the target model's fact, read by the widening pass and the
schedule: CPUs with the instruction where it is faster than their f32
FMAs), and their numerics, compiled for Zen 5's model and run on this
host where it has the instruction, against products summed in float64 and
rounded once to bf16.

Products of bf16 are exact in f32, so a result differs from the rounded
float64 sum only by the f32 summation's error and one rounding to bf16:
at most 2^-7 relative, plus 1e-4 of the sum of the products' magnitudes.
Shapes: K odd (its last pair padded with a zero), M prime (one row per
register tile), N short of a panel, one row and one column, a batch on
both operands or on A only, a relu epilogue, two threads, bound weights
(their panels packed once)."""

import ml_dtypes
import numpy as np
import pytest

import lamina
from lamina.passes.cpu_widen_contractions import CPUWidenContractions
from lamina.targets import get_target
from lamina.targets.host import detect_host

BF16 = ml_dtypes.bfloat16


@pytest.mark.parametrize("spec, dots", [
    ("cpu:znver4", True), ("cpu:znver5", True), ("cpu:sapphirerapids", False),
    ("cpu:icelake-server", False), ("cpu:haswell", False), ("cpu:znver5,-avx512f", False),
    ("cpu:znver5,-avx512bf16", False), ("cpu:icelake-server,+avx512bf16", False),
    ("cpu:neoverse-v2", False),
])
def test_targets_with_bf16_dot_products(spec, dots):
    target = get_target(spec)
    assert target.model.bf16_dot_products == dots
    pipeline = target.pipeline()
    widen = [p for p in pipeline.stage("fused").passes if isinstance(p, CPUWidenContractions)]
    assert [w.bf16_dot_products for w in widen] == [dots]
    schedule = pipeline.stage("schedule").passes[-1]
    assert schedule.bf16_dot_products == dots
    assert schedule.model().bf16_dot_products == int(dots)


def _describe(spec, shapes):
    (m, k), (_, n) = shapes
    text = (f'func.func @main(%a: tensor<{m}x{k}xbf16>, %b: tensor<{k}x{n}xbf16>) -> '
            f'tensor<{m}x{n}xbf16> {{\n'
            f'  %c = "nn.matmul"(%a, %b) : (tensor<{m}x{k}xbf16>, tensor<{k}x{n}xbf16>) -> '
            f'tensor<{m}x{n}xbf16>\n  return %c : tensor<{m}x{n}xbf16>\n}}\n')
    return str(get_target(spec).emit(lamina.parse(text), "schedule"))


def test_the_schedule_packs_pairs_only_with_the_instruction():
    dots = _describe("cpu:znver5,threads=1", ((37, 97), (97, 50)))
    assert "packed_sizes = [0, 32, 2]" in dots
    assert "x86vector.vector_contract_to_packed_type_dot_product" in dots
    # M = 37 is prime: one row per register tile, no loop over rows.
    assert "factor = 8" not in dots and "factor = 2" in dots
    wide = _describe("cpu:icelake-server,threads=1", ((37, 97), (97, 50)))
    assert "packed_sizes = [8, 32, 0]" in wide
    assert "x86vector" not in wide


def _source(a_shape, b_shape, relu):
    def t(shape):
        return "tensor<" + "x".join(map(str, shape)) + "xbf16>"
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    out = tuple(batch) + (a_shape[-2], b_shape[-1])
    body = f'  %c = "nn.matmul"(%a, %b) : ({t(a_shape)}, {t(b_shape)}) -> {t(out)}\n'
    result = "%c"
    if relu:
        body += f'  %r = "nn.relu"(%c) : ({t(out)}) -> {t(out)}\n'
        result = "%r"
    return (f"func.func @main(%a: {t(a_shape)}, %b: {t(b_shape)}) -> {t(out)} {{\n{body}"
            f"  return {result} : {t(out)}\n}}\n")


def _check(got, a, b, relu):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.matmul(a64, b64)
    if relu:
        want = np.maximum(want, 0)
    bound = 2.0 ** -7 * np.abs(want) + 1e-4 * np.matmul(np.abs(a64), np.abs(b64))
    error = np.abs(got.astype(np.float64) - want)
    assert (error <= bound).all(), f"max error {error.max()}, worst ratio {(error / bound).max()}"


host_has_dots = pytest.mark.skipif(not (detect_host().has("avx512bf16")
                                        and detect_host().has("avx512f")),
                                   reason="the host has no AVX512-BF16 dot products")


@host_has_dots
@pytest.mark.parametrize("a_shape, b_shape, threads, relu", [
    ((64, 96), (96, 128), 1, False),
    ((37, 97), (97, 50), 1, False),
    ((37, 97), (97, 50), 2, True),
    ((1, 3), (3, 17), 1, False),
    ((8, 1), (1, 32), 2, False),
    ((5, 255), (255, 33), 2, False),
    ((3, 16, 41), (41, 64), 1, True),
    ((3, 16, 40), (3, 40, 64), 2, False),
])
def test_matmul_matches_the_rounded_sum(a_shape, b_shape, threads, relu):
    source = _source(a_shape, b_shape, relu)
    target = get_target(f"cpu:znver5,threads={threads}")
    assert "x86vector.avx512.dot" in str(target.emit(lamina.parse(source), "tiled"))
    compiled = lamina.compile(source, target=target)
    rng = np.random.default_rng(sum(a_shape) + sum(b_shape))
    a = rng.standard_normal(a_shape).astype(BF16)
    b = rng.standard_normal(b_shape).astype(BF16)
    _check(compiled(a, b), a, b, relu)


@host_has_dots
def test_bound_weights_are_packed_once():
    compiled = lamina.compile(_source((37, 97), (97, 50), False), target="cpu:znver5,threads=1")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 97)).astype(BF16)
    b = rng.standard_normal((97, 50)).astype(BF16)
    bound = compiled.bind({1: b})
    _check(bound(a), a, b, False)
    _check(bound(-a), -a, b, False)
