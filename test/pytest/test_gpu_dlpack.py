"""DLPack in and out of GPU functions, on the emulation path (no GPU):
PyTorch CPU tensors are read in place through their capsules and the
results come back as PyTorch tensors over Lamina's memory, no copy either
way (checked by data pointer); bf16 goes through too; a wrong device,
element type, shape or non-contiguous strides are clear errors; and
capsules Lamina exports release their memory whether or not they are
consumed."""

import gc

import numpy as np
import pytest
import torch

import lamina
from lamina.dlpack import CPU, CUDA, DLPackBuffer, framework, read_dlpack
from lamina.targets import get_target

MLP = """
func.func @main(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %1 = "nn.add"(%0, %b) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = "nn.softmax"(%1) {axis = -1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
"""
BF16 = """
func.func @main(%x: tensor<16x32xbf16>, %w: tensor<32x16xbf16>) -> tensor<16x16xbf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<16x32xbf16>, tensor<32x16xbf16>) -> tensor<16x16xbf16>
  return %0 : tensor<16x16xbf16>
}
"""


@pytest.fixture(scope="module")
def mlp():
    return get_target("cuda:sm_80").emulation().compile(lamina.parse(MLP))


def tensors(function, seed=0, dtype=torch.float32):
    generator = torch.Generator().manual_seed(seed)
    return [torch.rand(t.shape, generator=generator, dtype=torch.float32).to(dtype) * 2 - 1
            for t in function.inputs]


def test_torch_tensors_in_and_out_without_a_copy(mlp, monkeypatch):
    inputs = tensors(mlp)
    seen = {}
    run = type(mlp).call_with_results

    def spy(self, arrays, results):
        seen["inputs"] = [a.ctypes.data for a in arrays]
        seen["results"] = [r.ctypes.data for r in results]
        run(self, arrays, results)

    monkeypatch.setattr(type(mlp), "call_with_results", spy)
    result = mlp(*inputs)
    assert isinstance(result, torch.Tensor) and result.dtype == torch.float32
    assert seen["inputs"] == [t.data_ptr() for t in inputs]
    assert seen["results"] == [result.data_ptr()]
    expected = mlp(*[t.numpy() for t in inputs])
    assert isinstance(expected, np.ndarray)
    np.testing.assert_allclose(result.numpy(), expected, rtol=0, atol=0)
    x = inputs[0].numpy().astype(np.float64)
    logits = x @ inputs[1].numpy() + inputs[2].numpy()
    softmax = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(result.numpy(), softmax / softmax.sum(-1, keepdims=True),
                               rtol=1e-4, atol=1e-6)


def test_a_result_outlives_the_call_and_is_released_with_its_tensor(mlp):
    gc.collect()
    before = len(DLPackBuffer._exported)
    result = mlp(*tensors(mlp))
    assert len(DLPackBuffer._exported) == before + 1
    values = result.clone()
    mlp(*tensors(mlp, seed=1))  # another call does not write this result's memory
    assert torch.equal(result, values)
    del result
    gc.collect()
    assert len(DLPackBuffer._exported) == before


def test_bfloat16_tensors():
    function = get_target("cuda:sm_90a").emulation().compile(lamina.parse(BF16))
    x, w = tensors(function, dtype=torch.bfloat16)
    result = function(x, w)
    assert result.dtype == torch.bfloat16
    expected = x.float() @ w.float()
    assert torch.allclose(result.float(), expected, rtol=4e-2, atol=2e-2)


def test_numpy_arrays_among_tensors_are_copied_in(mlp):
    x, w, b = tensors(mlp)
    result = mlp(x, w.numpy(), b)
    assert isinstance(result, torch.Tensor)
    assert torch.equal(result, mlp(x, w, b))


@pytest.mark.parametrize("make,error,message", [
    (lambda ts: [ts[0].double(), ts[1], ts[2]], TypeError,
     r"argument #0: expected tensor<8x64xf32> \(f32 elements\), got a tensor of f64"),
    (lambda ts: [ts[0][:4], ts[1], ts[2]], ValueError,
     r"argument #0: expected tensor<8x64xf32> \(shape \(8, 64\)\), got shape \(4, 64\)"),
    (lambda ts: [ts[0], ts[1].t().contiguous().t(), ts[2]], ValueError,
     r"argument #1: a tensor of strides \(1, 64\) is not C-contiguous"),
    (lambda ts: [DLPackBuffer(ts[0].data_ptr(), (CUDA, 0), "f32", (8, 64), ts[0]), ts[1], ts[2]],
     ValueError, r"argument #0: a tensor on cuda:0; this function takes tensors on cpu"),
    (lambda ts: ts[:2], TypeError, r"takes 3 argument\(s\)"),
])
def test_what_cannot_be_an_argument(mlp, make, error, message):
    with pytest.raises(error, match=message):
        mlp(*make(tensors(mlp)))


def test_capsules_read_back_what_was_exported():
    array = np.arange(12, dtype=np.int32).reshape(3, 4)
    buffer = DLPackBuffer(array.ctypes.data, (CPU, 0), "i32", array.shape, array)
    view = read_dlpack(buffer)
    assert (view.pointer, view.device, view.dtype, view.shape) == (
        array.ctypes.data, (CPU, 0), "i32", (3, 4))
    assert view.contiguous and (view.host_array() == array).all()
    assert framework(torch.zeros(1)) == "torch" and framework(buffer) is None
    assert np.shares_memory(np.from_dlpack(buffer), array)
    del view
    gc.collect()
    # Unconsumed capsules and consumed ones both let go of their memory.
    assert all(entry[2] is not array for entry in DLPackBuffer._exported.values())
