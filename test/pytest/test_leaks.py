"""Memory stays bounded: parsing and compiling many programs in one process
(a notebook, a server, the fuzzer) releases every context, module and
execution engine it made.

The programs differ in shape, op and element type, so that nothing is
shared through a cache, and each compiled function runs once. Growth is
measured from a warmed-up process (the first compiles load the JIT's
libraries), after a garbage collection.
"""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pytest

import lamina
from lamina.diagnostics import CompileError
from lamina.reference import random_inputs

OPS = ["relu", "exp", "tanh", "neg", "sigmoid"]
DTYPES = ["f32", "f16", "bf16"]


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def program(index: int) -> str:
    """A small nn program, different for each index."""
    op = OPS[index % len(OPS)]
    dtype = DTYPES[index // len(OPS) % len(DTYPES)]
    n, m = 1 + index % 7, 3 + index % 5
    t = f"tensor<{n}x{m}x{dtype}>"
    row = f"tensor<{m}x{dtype}>"
    return f"""
func.func @main(%x: {t}, %b: {row}) -> ({t}, tensor<{n}x{dtype}>) {{
  %0 = "nn.{op}"(%x) : ({t}) -> {t}
  %1 = "nn.add"(%0, %b) : ({t}, {row}) -> {t}
  %2 = "nn.reduce_sum"(%1) {{axes = array<i64: 1>}} : ({t}) -> tensor<{n}x{dtype}>
  return %1, %2 : {t}, tensor<{n}x{dtype}>
}}
"""


def compile_and_run(index: int) -> None:
    function = lamina.compile(program(index))
    function(*random_inputs(function.inputs, index))


def test_two_hundred_compiles_stay_bounded():
    for index in range(15):
        compile_and_run(index)
    gc.collect()
    before = resident_mib()
    start = time.perf_counter()
    for index in range(200):
        compile_and_run(15 + index)
    gc.collect()
    growth = resident_mib() - before
    assert growth < 30, f"200 compiles grew the process by {growth:.1f} MiB"
    assert time.perf_counter() - start < 60


def test_parses_and_failed_compiles_stay_bounded():
    """Parsing alone, and errors (whose diagnostics hold locations into a
    context), release their contexts too."""
    bad = program(0).replace('"nn.add"(%0, %b)', '"nn.matmul"(%0, %b)')
    for _ in range(10):
        lamina.parse(program(1))
    gc.collect()
    before = resident_mib()
    for index in range(300):
        lamina.parse(program(index))
        with pytest.raises(CompileError):
            lamina.parse(bad)
    gc.collect()
    growth = resident_mib() - before
    assert growth < 30, f"600 parses grew the process by {growth:.1f} MiB"


def test_compiled_functions_outlive_nothing_they_do_not_need():
    """A compiled function keeps working after the module text and every
    other compile are gone (the release above is not premature)."""
    function = lamina.compile(program(3))
    for index in range(5):
        compile_and_run(index)
    gc.collect()
    x, b = random_inputs(function.inputs, 1)
    summed, reduced = function(x, b)
    np.testing.assert_allclose(reduced, summed.sum(axis=1), rtol=1e-5, atol=1e-5)
