"""The generator's degenerate and GPU-shaped programs (fixed seeds), and
the `jit-threads` configuration."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import lamina
from lamina.fuzz import generate_program, program_profile
from lamina.fuzz_check import check_program, configurations, jit_threads, replayed
from lamina.reference import evaluate

SEEDS = range(400)


@pytest.fixture(scope="module")
def programs():
    return {seed: generate_program(seed) for seed in SEEDS}


def _dims(program):
    return {name: tuple(d.size for d in t.shape) for name, t in program.types().items()}


def test_profiles_are_drawn_in_their_shares():
    shares = Counter(program_profile(seed) for seed in range(2000))
    assert 0.15 < shares["degenerate"] / 2000 < 0.25
    assert 0.07 < shares["gemv"] / 2000 < 0.13
    assert program_profile(5) == program_profile(5)


def test_degenerate_programs_have_empty_and_unit_dims(programs):
    degenerate = [p for s, p in programs.items() if program_profile(s) == "degenerate"]
    with_zero = [p for p in degenerate if any(0 in dims for dims in _dims(p).values())]
    assert len(with_zero) >= len(degenerate) // 4
    assert any(1 in dims for p in degenerate for dims in _dims(p).values())
    # Every op family meets an empty operand somewhere.
    kinds = {op.kind for p in with_zero for op in p.ops
             if any(0 in _dims(p)[o] for o in op.operands)}
    assert {"nn.matmul", "nn.slice", "nn.concat", "nn.pad"} <= kinds, kinds
    # Default programs draw no size 0.
    default = [p for s, p in programs.items() if program_profile(s) == "default"]
    assert not any(0 in dims for p in default for dims in _dims(p).values())


def test_empty_slices_including_from_the_end_of_an_axis(programs):
    empty, at_end = 0, 0
    for program in programs.values():
        types = program.types()
        for op in program.ops:
            if op.kind != "nn.slice":
                continue
            shape = [d.size for d in types[op.operands[0]].shape]
            result = [d.size for d in types[op.results[0]].shape]
            if 0 in result and 0 not in shape:
                empty += 1
                at_end += any(start == size > 0 for start, size in zip(op.attrs["starts"], shape))
    assert empty >= 3 and at_end >= 2, (empty, at_end)


def test_gemv_programs(programs):
    found = Counter()
    for seed, program in programs.items():
        if program_profile(seed) != "gemv":
            continue
        types = program.types()
        matmuls = [op for op in program.ops if op.kind == "nn.matmul"]
        assert matmuls, seed
        lhs, rhs = (types[o] for o in matmuls[0].operands)
        m, k = lhs.shape[-2].size, lhs.shape[-1].size
        assert m == 1 or k == 1, (seed, m, k)
        assert lhs.dtype in ("f16", "bf16")
        found["m1" if m == 1 else "k1"] += 1
        found[lhs.dtype] += 1
        found["epilogue"] += any(op.kind in ("nn.add", "nn.relu", "nn.gelu") and
                                 matmuls[0].results[0] in op.operands for op in program.ops)
    assert found["m1"] >= 3 and found["k1"] >= 3 and found["f16"] and found["bf16"]
    assert found["epilogue"] >= 3


def test_batched_gemvs_stay_within_the_element_budget():
    # Program 874 of campaign seed 20 drew a batch of 3 over a 33x64 product.
    from lamina.fuzz import MAX_ELEMENTS, elements
    program = generate_program(20_000_874, max_ops=5)
    assert program_profile(20_000_874) == "gemv"
    assert all(elements(t.shape) <= MAX_ELEMENTS for t in program.types().values())


def test_new_programs_verify(programs):
    for seed, program in programs.items():
        if program_profile(seed) != "default":
            lamina.parse(program.text())


def test_replayed_program_traces_to_the_same_function():
    program = generate_program(1)                      # a gemv
    inputs = [np.random.default_rng(0).uniform(-1, 1, [d.size for d in t.shape]).astype(
        lamina.types.numpy_dtype(t.dtype)) for t in (program.input_type(n)
                                                    for n in program.inputs)]
    traced = lamina.jit(replayed(program.text())).trace(*inputs)
    expected = evaluate(lamina.parse(program.text()), inputs)
    assert [np.asarray(a).tolist() for a in evaluate(traced, inputs)] == \
        [np.asarray(a).tolist() for a in expected]


def test_jit_threads_configuration_checks_programs():
    (config,) = configurations(["jit-threads"])
    for seed in (1, 35, 7):                              # gemv, degenerate, default
        assert [str(v) for v in check_program(generate_program(seed), 0, [config])] == ["ok: "]


def test_jit_threads_reports_a_thread_that_differs(monkeypatch):
    import threading

    calls = Counter()
    original = lamina.nn.JitFunction.__call__

    def skewed(self, *args):
        results = original(self, *args)
        calls[threading.get_ident()] += 1
        if len(calls) == 2:                                  # the second thread to finish
            return results * 2
        return results

    monkeypatch.setattr(lamina.nn.JitFunction, "__call__", skewed)
    program = generate_program(7)
    text = program.text()
    inputs = [np.ones([d.size for d in program.input_type(n).shape],
                      lamina.types.numpy_dtype(program.input_type(n).dtype))
              for n in program.inputs]
    with pytest.raises(RuntimeError, match=r"thread \d of 3: result #\d+ differs from thread 0's bit for bit"):
        jit_threads(3)(text, inputs)


def test_lamina_fuzz_lists_and_runs_jit_threads():
    script = Path(sys.executable).parent / "lamina-fuzz"
    listed = subprocess.run([str(script), "--list-configs"], capture_output=True, text=True,
                            timeout=120)
    assert "jit-threads" in listed.stdout
    done = subprocess.run([str(script), "--program", "35", "--configs", "reference,jit-threads"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "program 35: ok:", done.stdout
