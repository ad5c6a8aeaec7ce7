"""Compile time of models that repeat their blocks: groups that are the
same up to their constants' values are one function (cpu-outline-fusion-
groups), large constants are data bound at load time rather than code,
and the compiled-program cache keys constants by their bytes.

Outlining changes where the code of a group lives, not what it computes:
results are compared bit for bit with the same program compiled with its
groups inline, and with the NumPy reference at float32's tolerance.
"""

from __future__ import annotations

import numpy as np

import lamina
from lamina.cache import LoadedLibrary, program_key
from lamina.reference import compare, evaluate

TARGET = "cpu:threads=2"


def dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(array, separator=",", threshold=10**9,
                                      max_line_width=10**9, floatmode="unique") + ">"


def mlp(layers: int, width: int = 64, seed: int = 0) -> str:
    """`layers` linear layers with ReLU, every weight a constant."""
    rng = np.random.default_rng(seed)
    t = f"tensor<8x{width}xf32>"
    lines = [f"func.func @main(%x0: {t}) -> {t} {{"]
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        b = rng.standard_normal(width).astype(np.float32)
        lines += [
            f"  %w{i} = arith.constant {dense(w)} : tensor<{width}x{width}xf32>",
            f"  %b{i} = arith.constant {dense(b)} : tensor<{width}xf32>",
            f"  %h{i} = \"nn.matmul\"(%x{i}, %w{i}) : ({t}, tensor<{width}x{width}xf32>) -> {t}",
            f"  %a{i} = \"nn.add\"(%h{i}, %b{i}) : ({t}, tensor<{width}xf32>) -> {t}",
            f"  %x{i + 1} = \"nn.relu\"(%a{i}) : ({t}) -> {t}",
        ]
    lines += [f"  return %x{layers} : {t}", "}"]
    return "\n".join(lines)


# Two residual blocks of two 3x3 convolutions each, channels-last through
# the layout stage: four convolutions of one shape.
def convolutions(seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    t = "tensor<1x16x12x12xf32>"
    f = "tensor<16x16x3x3xf32>"
    lines = [f"func.func @main(%x0: {t}) -> {t} {{"]
    for i in range(2):
        for j in range(2):
            w = (rng.standard_normal((16, 16, 3, 3)) / 12).astype(np.float32)
            lines.append(f"  %w{i}{j} = arith.constant {dense(w)} : {f}")
        lines += [
            f"  %c{i}0 = \"nn.conv2d\"(%x{i}, %w{i}0) {{padding = array<i64: 1, 1, 1, 1>}} "
            f": ({t}, {f}) -> {t}",
            f"  %r{i} = \"nn.relu\"(%c{i}0) : ({t}) -> {t}",
            f"  %c{i}1 = \"nn.conv2d\"(%r{i}, %w{i}1) {{padding = array<i64: 1, 1, 1, 1>}} "
            f": ({t}, {f}) -> {t}",
            f"  %s{i} = \"nn.add\"(%c{i}1, %x{i}) : ({t}, {t}) -> {t}",
            f"  %x{i + 1} = \"nn.relu\"(%s{i}) : ({t}) -> {t}",
        ]
    lines += [f"  return %x2 : {t}", "}"]
    return "\n".join(lines)


def inline_pipeline():
    pipeline = lamina.get_target(TARGET).pipeline()
    pipeline.remove("cpu-outline-fusion-groups")
    return pipeline


def scheduled(text: str) -> str:
    module = lamina.parse(text)
    lamina.get_target(TARGET).pipeline().run(module, until="schedule")
    return str(module)




def test_repeated_layers_are_one_function_called_per_layer():
    text = scheduled(mlp(3))
    functions = [line for line in text.splitlines() if "func.func private" in line]
    assert len(functions) == 1, functions
    name = functions[0].split("@")[1].split("(")[0]
    assert text.count(f"call @{name}(") == 3


def test_outlined_groups_compute_what_inline_groups_compute():
    for text, shape in ((mlp(3), (8, 64)), (convolutions(), (1, 16, 12, 12))):
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        outlined = lamina.compile(text, target=TARGET)(x)
        inline = lamina.compile(text, target=TARGET, pipeline=inline_pipeline())(x)
        np.testing.assert_array_equal(outlined, inline)
        expected = evaluate(lamina.parse(text), [x])[0]
        assert compare(outlined, expected, "f32").ok


def test_large_constants_are_bound_as_data():
    compiled = lamina.compile(mlp(2), target=TARGET)
    sizes = sorted(c.array.nbytes for c in compiled.constants)
    assert sizes == [64 * 64 * 4] * 2  # the weights; the biases (256 bytes) stay in the code
    assert all(c.array.ctypes.data % c.alignment == 0 for c in compiled.constants)


def test_the_key_follows_constants_bytes_and_a_cached_program_holds_them(cache):
    target = lamina.get_target(TARGET)
    description, pipeline = target.description(), str(target.pipeline())
    keys = {program_key(lamina.parse(mlp(2, seed=seed)), None, description, pipeline,
                        str(cache)) for seed in (0, 0, 1)}
    assert len(keys) == 2
    x = np.random.default_rng(2).standard_normal((8, 64)).astype(np.float32)
    compiled = lamina.compile(mlp(2), target=TARGET)
    loaded = lamina.compile(mlp(2), target=TARGET)
    assert isinstance(loaded.engine, LoadedLibrary)
    np.testing.assert_array_equal(loaded(x), compiled(x))
    other = lamina.compile(mlp(2, seed=1), target=TARGET)
    assert not isinstance(other.engine, LoadedLibrary)
    expected = evaluate(lamina.parse(mlp(2, seed=1)), [x])[0]
    assert compare(other(x), expected, "f32").ok
