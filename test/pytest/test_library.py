"""Shared libraries from `lamina-compile --emit=shared`, loaded back by
`lamina.load`: arguments in order, results returned, checked like
`lamina.compile`'s functions, and libraries that are not Lamina's or are
for another architecture refused (lamina.targets.library)."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import lamina
from lamina.reference import evaluate
from lamina.targets import get_target
from lamina.targets.library import header_source, shared_library

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler, cc")

PROGRAM = """
func.func @main(%x: tensor<3x5xf32> {lamina.parameter = "x"}, %n: tensor<5xi32>,
                %k: tensor<2x4xi64>, %h: tensor<3x5xf16>) -> (tensor<3x5xf32>, tensor<5xi32>,
                                                               tensor<2x4xi64>, tensor<3x5xf16>) {
  %0 = "nn.relu"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = "nn.add"(%n, %n) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %2 = "nn.mul"(%k, %k) : (tensor<2x4xi64>, tensor<2x4xi64>) -> tensor<2x4xi64>
  %3 = "nn.tanh"(%h) : (tensor<3x5xf16>) -> tensor<3x5xf16>
  return %0, %1, %2, %3 : tensor<3x5xf32>, tensor<5xi32>, tensor<2x4xi64>, tensor<3x5xf16>
}
"""


def _library(tmp_path, text, spec="cpu:threads=1", name="model.so"):
    path = tmp_path / name
    path.write_bytes(shared_library(get_target(spec), lamina.parse(text)))
    return path


def _inputs(rng):
    return [rng.standard_normal((3, 5)).astype(np.float32),
            rng.integers(-1000, 1000, 5).astype(np.int32),
            rng.integers(-1 << 20, 1 << 20, (2, 4)).astype(np.int64),
            rng.standard_normal((3, 5)).astype(np.float16)]


@pytest.mark.parametrize("spec", ["cpu:threads=1", "cpu:x86-64-v3,threads=2"])
def test_library_matches_numpy(tmp_path, spec):
    if get_target("cpu").model.arch != "x86_64" and "x86" in spec:
        pytest.skip("an x86-64 preset")
    f = lamina.load(_library(tmp_path, PROGRAM, spec))
    assert f.argument_names == ("x", "arg1", "arg2", "arg3")
    assert f.threads == (2 if "threads=2" in spec else 1)
    args = _inputs(np.random.default_rng(0))
    results = f(*args)
    expected = evaluate(lamina.parse(PROGRAM), args)
    assert [r.dtype for r in results] == [np.float32, np.int32, np.int64, np.float16]
    np.testing.assert_allclose(results[0], expected[0], rtol=1e-6)
    np.testing.assert_array_equal(results[1], expected[1])
    np.testing.assert_array_equal(results[2], expected[2])
    np.testing.assert_allclose(results[3].astype(np.float32), expected[3].astype(np.float32),
                               rtol=1e-2, atol=2e-3)


def test_library_takes_non_contiguous_arrays(tmp_path):
    f = lamina.load(_library(tmp_path, PROGRAM))
    args = _inputs(np.random.default_rng(1))
    wide = np.zeros((3, 10), np.float32)
    wide[:, ::2] = args[0]
    results = f(wide[:, ::2], *args[1:])
    np.testing.assert_array_equal(results[0], np.maximum(args[0], 0))


def test_library_checks_its_arguments(tmp_path):
    f = lamina.load(_library(tmp_path, PROGRAM))
    args = _inputs(np.random.default_rng(2))
    with pytest.raises(TypeError, match="takes 4 argument"):
        f(*args[:3])
    with pytest.raises(TypeError, match="argument #1: expected tensor<5xi32> .*int64 array"):
        f(args[0], args[1].astype(np.int64), *args[2:])
    with pytest.raises(ValueError, match=r"argument #0: expected tensor<3x5xf32> \(shape \(3, 5\)"
                                         r"\), got shape \(5, 3\)"):
        f(args[0].T.copy(), *args[1:])
    with pytest.raises(TypeError, match="cannot bind weights"):
        f.bind([args[0]])


def test_load_refuses_what_is_not_a_lamina_library(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such library"):
        lamina.load(tmp_path / "missing.so")
    text = tmp_path / "model.mlir"
    text.write_text(PROGRAM)
    with pytest.raises(ValueError, match="not a shared library"):
        lamina.load(text)
    source = tmp_path / "other.c"
    source.write_text("int other(void) { return 1; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "other.so", source], check=True)
    with pytest.raises(ValueError, match="not a library from lamina-compile --emit=shared"):
        lamina.load(tmp_path / "other.so")
    subprocess.run(["cc", "-c", "-fPIC", "-o", tmp_path / "other.o", source], check=True)
    with pytest.raises(ValueError, match="ELF file but not a shared library"):
        lamina.load(tmp_path / "other.o")


@pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None,
                    reason="needs the AArch64 cross compiler")
def test_load_refuses_a_library_of_another_architecture(tmp_path):
    path = _library(tmp_path, PROGRAM, "cpu:aarch64")
    with open(path, "rb") as f:
        assert int.from_bytes(f.read(20)[18:20], "little") == 183
    with pytest.raises(ValueError, match="is a library for AArch64, and this machine runs x86-64"):
        lamina.load(path)


def test_header_names_every_shape_and_type():
    header = header_source(get_target("cpu:threads=1"), lamina.parse(PROGRAM))
    assert "int lamina_main(const float *x,\n" in header
    assert "const uint16_t *arg3,\n" in header
    assert "float *result0,\n" in header
    assert "int64_t *result2,\n" in header
    for line in ["#define LAMINA_MAIN_ARGUMENTS 4", "#define LAMINA_MAIN_RESULTS 4",
                 "#define LAMINA_MAIN_X_SIZE 15", "#define LAMINA_MAIN_X_DIM1 5",
                 "#define LAMINA_MAIN_ARG2_DIM0 2", "#define LAMINA_MAIN_RESULT3_RANK 2"]:
        assert line + "\n" in header
    assert "tensor<3x5xf16>  uint16_t[15]  input" in header


def test_header_compiles_as_c_and_cxx(tmp_path):
    header = tmp_path / "model.h"
    header.write_text(header_source(get_target("cpu:threads=1"), lamina.parse(PROGRAM)))
    for compiler, suffix in (("cc", "c"), ("c++", "cpp")):
        if shutil.which(compiler) is None:
            continue
        source = tmp_path / f"use.{suffix}"
        source.write_text('#include "model.h"\nint use(void) { return LAMINA_MAIN_X_SIZE; }\n')
        subprocess.run([compiler, "-Wall", "-Werror", "-c", "-I", tmp_path, source, "-o",
                        tmp_path / f"use_{suffix}.o"], check=True)


SCALARS = """
func.func @reduce(%x: tensor<4x6xf32>, %m: tensor<4x6xi1>)
    -> (tensor<f32>, tensor<4x6xf32>, tensor<4x6xi1>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<f32>
  %n = "nn.neg"(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %1 = "nn.select"(%m, %x, %n) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>)
      -> tensor<4x6xf32>
  %2 = "nn.compare"(%x, %n) {predicate = "lt"} : (tensor<4x6xf32>, tensor<4x6xf32>)
      -> tensor<4x6xi1>
  return %0, %1, %2 : tensor<f32>, tensor<4x6xf32>, tensor<4x6xi1>
}
"""


def test_library_of_scalars_and_booleans(tmp_path):
    f = lamina.load(_library(tmp_path, SCALARS))
    assert f.name == "reduce" and f.results[0].shape == ()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    m = rng.random((4, 6)) < 0.5
    total, selected, negative = f(x, m)
    assert total.shape == () and negative.dtype == np.bool_
    np.testing.assert_allclose(total, x.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_array_equal(selected, np.where(m, x, -x))
    np.testing.assert_array_equal(negative, x < 0)
    header = header_source(get_target("cpu:threads=1"), lamina.parse(SCALARS))
    assert "int lamina_reduce(const float *arg0,\n" in header
    assert "const uint8_t *arg1,\n" in header
    assert "#define LAMINA_REDUCE_RESULT0_RANK 0\n" in header
