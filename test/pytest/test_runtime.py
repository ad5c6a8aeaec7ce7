"""The JIT runtime: NumPy arrays through compiled code, every element type,
argument checks, entry selection, and inputs that stay unmodified."""

import ml_dtypes
import numpy as np
import pytest

import lamina
from lamina.diagnostics import CompileError
from lamina.runtime import descriptor

ID1 = "affine_map<(i) -> (i)>"


def elementwise(dtype: str, body: str, n: int = 8, extra: str = "") -> str:
    """A function `@main(%a, %b) -> a (op) b` over `tensor<n x dtype>`."""
    return f"""
func.func @main(%a: tensor<{n}x{dtype}>, %b: tensor<{n}x{dtype}>) -> tensor<{n}x{dtype}> {{
  %e = tensor.empty() : tensor<{n}x{dtype}>
  %r = linalg.generic {{indexing_maps = [{ID1}, {ID1}, {ID1}], iterator_types = ["parallel"]}}
      ins(%a, %b : tensor<{n}x{dtype}>, tensor<{n}x{dtype}>) outs(%e : tensor<{n}x{dtype}>) {{
  ^bb0(%x: {dtype}, %y: {dtype}, %o: {dtype}):
    {extra}
    %z = {body}
    linalg.yield %z : {dtype}
  }} -> tensor<{n}x{dtype}>
  return %r : tensor<{n}x{dtype}>
}}
"""


MATMUL_BIAS = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.exp %s : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  return %m, %r : tensor<4x16xf32>, tensor<4x16xf32>
}
"""


def test_several_arguments_and_results():
    f = lamina.compile(MATMUL_BIAS)
    rng = np.random.default_rng(0)
    a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 16), (16,)))
    product, activated = f(a, b, bias)
    np.testing.assert_allclose(product, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(activated, np.exp(a @ b + bias), rtol=1e-5)
    assert f.compile_seconds > 0
    assert "tensor<4x8xf32>" in repr(f)


@pytest.mark.parametrize("dtype,np_dtype,op,reference", [
    ("f32", np.float32, "arith.addf %x, %y : f32", np.add),
    ("f64", np.float64, "arith.mulf %x, %y : f64", np.multiply),
    ("f16", np.float16, "arith.subf %x, %y : f16", np.subtract),
    ("bf16", ml_dtypes.bfloat16, "arith.mulf %x, %y : bf16", np.multiply),
    ("i8", np.int8, "arith.addi %x, %y : i8", np.add),
    ("i16", np.int16, "arith.muli %x, %y : i16", np.multiply),
    ("i32", np.int32, "arith.subi %x, %y : i32", np.subtract),
    ("i64", np.int64, "arith.maxsi %x, %y : i64", np.maximum),
    ("i1", np.bool_, "arith.xori %x, %y : i1", np.logical_xor),
])
def test_element_types(dtype, np_dtype, op, reference):
    f = lamina.compile(elementwise(dtype, op))
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(8) * 4).astype(np_dtype)
    b = (rng.standard_normal(8) * 4).astype(np_dtype)
    out = f(a, b)
    assert out.dtype == np.dtype(np_dtype)
    expected = reference(a.astype(np.float64), b.astype(np.float64)).astype(np_dtype)
    np.testing.assert_array_equal(out.astype(np.float64), expected.astype(np.float64))


def test_half_precision_math_is_done_in_f32():
    extra = "%w = arith.extf %x : f16 to f32\n    %t = math.tanh %w : f32"
    f = lamina.compile(elementwise("f16", "arith.truncf %t : f32 to f16", extra=extra))
    x = np.linspace(-2, 2, 8).astype(np.float16)
    np.testing.assert_allclose(f(x, x).astype(np.float32), np.tanh(x.astype(np.float32)),
                               rtol=2e-3, atol=1e-3)
    f = lamina.compile(elementwise("bf16", "math.exp %x : bf16"))
    x = np.linspace(-2, 2, 8).astype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(f(x, x).astype(np.float32), np.exp(x.astype(np.float32)),
                               rtol=1e-2)


def test_bool_constants_and_comparisons():
    source = f"""
func.func @main(%x: tensor<8xf32>, %m: tensor<8xi1>) -> tensor<8xi1> {{
  %k = arith.constant dense<[true, false, true, false, false, false, false, true]> : tensor<8xi1>
  %e = tensor.empty() : tensor<8xi1>
  %r = linalg.generic {{indexing_maps = [{ID1}, {ID1}, {ID1}, {ID1}], iterator_types = ["parallel"]}}
      ins(%x, %m, %k : tensor<8xf32>, tensor<8xi1>, tensor<8xi1>) outs(%e : tensor<8xi1>) {{
  ^bb0(%a: f32, %b: i1, %c: i1, %o: i1):
    %zero = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %a, %zero : f32
    %q = arith.xori %p, %b : i1
    %s = arith.xori %q, %c : i1
    linalg.yield %s : i1
  }} -> tensor<8xi1>
  return %r : tensor<8xi1>
}}
"""
    f = lamina.compile(source)
    x = np.linspace(-1, 1, 8).astype(np.float32)
    m = np.array([1, 0, 1, 0, 1, 1, 0, 0], bool)
    k = np.array([1, 0, 1, 0, 0, 0, 0, 1], bool)
    np.testing.assert_array_equal(f(x, m), (x > 0) ^ m ^ k)


def test_inputs_are_never_written():
    source = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %r = linalg.fill ins(%one : f32) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
    f = lamina.compile(source)
    a = np.zeros(4, np.float32)
    np.testing.assert_array_equal(f(a), np.ones(4, np.float32))
    np.testing.assert_array_equal(a, np.zeros(4, np.float32))


def test_returned_argument_and_rank_zero():
    source = """
func.func @main(%a: tensor<f32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
  return %b, %a : tensor<2x3xf32>, tensor<f32>
}
"""
    f = lamina.compile(source)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    out_b, out_a = f(np.float32(7), b)
    np.testing.assert_array_equal(out_b, b)
    assert out_b.ctypes.data != b.ctypes.data
    assert out_a.shape == () and out_a == 7


def test_non_contiguous_arguments():
    f = lamina.compile(elementwise("f32", "arith.addf %x, %y : f32"))
    base = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(f(base[::2], base[1::2]), base[::2] + base[1::2])


def test_descriptors_point_at_the_arrays():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = descriptor(a)
    assert d.aligned == a.ctypes.data
    assert list(d.sizes) == [3, 4] and list(d.strides) == [4, 1]


def test_calls_between_functions():
    source = f"""
func.func private @twice(%a: tensor<8xf32>) -> tensor<8xf32> {{
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {{indexing_maps = [{ID1}, {ID1}], iterator_types = ["parallel"]}}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {{
  ^bb0(%x: f32, %o: f32):
    %z = arith.addf %x, %x : f32
    linalg.yield %z : f32
  }} -> tensor<8xf32>
  return %r : tensor<8xf32>
}}
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {{
  %0 = func.call @twice(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = func.call @twice(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}}
"""
    f = lamina.compile(source)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(f(x), 4 * x)


def test_argument_errors():
    f = lamina.compile(elementwise("f32", "arith.addf %x, %y : f32"))
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="takes 2 argument"):
        f(x)
    with pytest.raises(TypeError, match=r"argument #1: expected tensor<8xf32> \(float32"):
        f(x, x.astype(np.float64))
    with pytest.raises(ValueError, match=r"argument #0: expected tensor<8xf32> \(shape \(8,\)\)"):
        f(np.zeros(4, np.float32), x)
    np.testing.assert_array_equal(f([1] * 8, x), np.ones(8, np.float32))


def test_entry_selection():
    two = """
func.func @first(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }
func.func @second(%a: tensor<3xf32>) -> tensor<3xf32> { return %a : tensor<3xf32> }
"""
    with pytest.raises(CompileError, match="cannot choose the entry function"):
        lamina.compile(two)
    with pytest.raises(CompileError, match="no function @third"):
        lamina.compile(two, entry="third")
    f = lamina.compile(two, entry="second")
    assert f.inputs[0].shape == (3,)
    one = "func.func @only(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
    assert lamina.compile(one).name == "only"


def test_non_tensor_signature_is_rejected():
    source = "func.func @main(%a: f32) -> f32 { return %a : f32 }"
    with pytest.raises(CompileError, match="argument #0 of @main: expected a ranked tensor"):
        lamina.compile(source)


def test_module_is_not_modified():
    module = lamina.parse(MATMUL_BIAS)
    before = str(module)
    lamina.compile(module)
    assert str(module) == before
