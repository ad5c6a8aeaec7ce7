"""Tuning: the tuned program matches NumPy and, on the search's own
measurements, is never slower than the default (the default is the first
candidate and wins ties); the default compile takes its schedules from the
tuning cache, for the target the entry was tuned for only, and ignores a
corrupted entry; the schedule pass itself reads no cache. Every test uses its own cache directory."""

import dataclasses

import numpy as np
import pytest

import lamina
from lamina.tuning import GroupTuning, MARGIN, applied, recording, store_choice

# x @ w + b, relu: a contraction group and its epilogue.
PROGRAM = """
func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>)
    -> tensor<64x64xf32> {
  %h = "nn.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %hb = "nn.add"(%h, %b) : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %r = "nn.relu"(%hb) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
"""
TARGET = "cpu:threads=2"


def inputs():
    rng = np.random.default_rng(1)
    return [rng.standard_normal(s).astype(np.float32) for s in ((64, 32), (32, 64), (64,))]


def reference(x, w, b):
    return np.maximum(x @ w + b, 0)


def schedule_script(target=TARGET) -> str:
    return str(lamina.get_target(target).emit(lamina.parse(PROGRAM), "schedule"))


def schedule_pass_alone() -> str:
    """The program's schedule from the cpu-schedule pass run by itself on
    the linalg stage's product, as lamina-opt would."""
    pipeline = lamina.get_target(TARGET).pipeline()
    module = lamina.parse(PROGRAM)
    pipeline.run(module, until="linalg")
    (schedule,) = [p for p in pipeline.stage("schedule").passes
                   if getattr(p, "argument", "") == "cpu-schedule"]
    assert schedule.apply(module.operation)
    return str(module)


def test_tuned_program_matches_numpy_and_is_never_slower(cache):
    tuned = lamina.compile(PROGRAM, target=TARGET, tune=6)
    args = inputs()
    np.testing.assert_allclose(tuned(*args), reference(*args), rtol=1e-5, atol=1e-5)
    report = tuned.tuning
    assert report.groups and sum(len(g.candidates) for g in report.groups) >= 2
    for group in report.groups:
        # The default is measured first; a variant is chosen only when it
        # beat the best so far, timed beside it, by the margin.
        assert group.candidates[0].model == group.default
        chosen = [c for c in group.candidates if c.model == group.chosen]
        assert len(chosen) == 1
        if group.chosen != group.default:
            assert chosen[0].seconds < chosen[0].best_seconds * (1 - MARGIN)
    # Timed side by side at the end: kept variants were faster.
    assert report.best_seconds <= report.default_seconds
    if report.choices:
        assert report.best_seconds < report.default_seconds
    assert len(list((cache / "tuning").glob("*.json"))) == len(report.groups)


def test_the_default_compile_uses_the_tuning_cache(cache):
    with recording() as session:
        default_script = schedule_script()
    key, group = next((k, g) for k, g in session.recorded.items() if session.variants[k])
    variant = session.variants[key][0]
    with applied({key: variant}):
        tuned_script = schedule_script()
    assert tuned_script != default_script

    store_choice(dataclasses.replace(group, chosen=variant))
    assert schedule_script() == tuned_script
    # The choice reaches the pass as IR; the pass alone reads no cache.
    assert "lamina.schedule_choice" in tuned_script
    assert "lamina.schedule_choice" not in default_script
    assert schedule_pass_alone() == default_script
    # Another thread count is another key: its default schedules stay.
    with recording():
        one_thread = schedule_script("cpu:threads=1")
    assert schedule_script("cpu:threads=1") == one_thread
    f = lamina.compile(PROGRAM, target=TARGET)
    args = inputs()
    np.testing.assert_allclose(f(*args), reference(*args), rtol=1e-5, atol=1e-5)

    (entry,) = (cache / "tuning").glob("*.json")
    entry.write_text('{"model": {"vector_bits": "wide"')
    assert schedule_script() == default_script


def test_variants_differ_from_the_default_and_each_other():
    with recording() as session:
        schedule_script()
    assert session.recorded
    for key, group in session.recorded.items():
        assert isinstance(group, GroupTuning) and len(key) == 64
        assert group.default not in session.variants[key]
        assert len(set(session.variants[key])) == len(session.variants[key])


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive number of seconds"):
        lamina.compile(PROGRAM, target=TARGET, tune=0)
