"""The ONNX backend node tests (`onnx.backend.test.case.node`) through
`lamina.from_onnx` and `lamina.compile` on the CPU (the runner and its
outcomes: test/pytest/onnx_conformance.py).

CI runs a fixed sample (the cases whose name hashes to 0 modulo
`SAMPLE_MODULUS`, about 160 of 1,884); `LAMINA_ONNX_ALL=1` runs every case.
A wrong result, a crash, a timeout, an internal error or a compile failure
fails the test; a clear "not supported" is an expected failure only where
`onnx_expected_failures.txt` lists the case with that category, and a
listed case that passes fails the test too, so that the list only shrinks.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

pytest.importorskip("onnx")

_spec = importlib.util.spec_from_file_location(
    "onnx_conformance", Path(__file__).with_name("onnx_conformance.py"))
conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conformance)


def test_expected_failures_are_clear_errors():
    expected = conformance.read_expected()
    assert expected
    assert set(expected.values()) <= set(conformance.CATEGORIES)


def test_onnx_backend_node_tests():
    everything = os.environ.get("LAMINA_ONNX_ALL", "").strip() not in ("", "0")
    outcomes = conformance.run_in_fresh_process(sample=not everything)
    problems = conformance.differences(outcomes, conformance.read_expected())
    if everything:
        problems += [f"{name}: listed, but no such case" for name in
                     sorted(set(conformance.read_expected()) - set(outcomes))]
    assert not problems, conformance.summary(outcomes) + "\n" + "\n".join(problems)
