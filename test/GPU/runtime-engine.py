# REQUIRES: cuda-gpu, cuda-sm_90a
# RUN: %PYTHON %s | FileCheck %s
#
# A GPU program as a device-resident engine on a Hopper GPU: a transformer
# block (examples/attention.mlir) and a CNN (examples/convnet.mlir) match
# NumPy with CUDA graphs on and off; PyTorch CUDA tensors go in and come
# out with no host copy (the results are CUDA tensors, the inputs read in
# place); repeated calls replay one graph; torch.compile routes CUDA
# tensors through it.

import os

import numpy as np
import torch

import lamina
from lamina.reference import compare, evaluate, random_inputs

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def example(name):
    return lamina.parse_file(os.path.join(EXAMPLES, name))


# CHECK-LABEL: TEST: numpy_calls_match
# CHECK: attention.mlir graphs True ok True
# CHECK: attention.mlir graphs False ok True
# CHECK: convnet.mlir graphs True ok True
# CHECK: convnet.mlir graphs False ok True
@run
def numpy_calls_match():
    for name in ("attention.mlir", "convnet.mlir"):
        module = example(name)
        for graphs in (True, False):
            f = lamina.compile(module, target="cuda:sm_90a", graphs=graphs)
            arrays = random_inputs(f.inputs, seed=2)
            expected = evaluate(module, arrays)
            ok = True
            for _ in range(3):
                got = f(*arrays)
                ok &= compare(got, expected[0], f.results[0].dtype).ok
            print(name, "graphs", graphs, "ok", ok)


# CHECK-LABEL: TEST: cuda_tensors_in_and_out
# CHECK: cuda True same True replayed True
@run
def cuda_tensors_in_and_out():
    module = example("attention.mlir")
    f = lamina.compile(module, target="cuda:sm_90a")
    arrays = random_inputs(f.inputs, seed=2)
    tensors = [torch.from_numpy(a).cuda() for a in arrays]
    first = f(*tensors)
    pointer = first.data_ptr()
    want = f(*arrays)
    same = np.allclose(first.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
    del first
    again = f(*tensors)
    print("cuda", again.is_cuda, "same", same, "replayed", again.data_ptr() == pointer)


# CHECK-LABEL: TEST: torch_compile_on_cuda
# CHECK: cuda True close True
@run
def torch_compile_on_cuda():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 64)).cuda().eval()
    x = torch.randn(32, 64, device="cuda")
    compiled = torch.compile(model, backend="lamina", options={"target": "cuda:sm_90a"})
    with torch.no_grad():
        y = compiled(x)
        want = model(x)
    print("cuda", y.is_cuda, "close", torch.allclose(y, want, rtol=1e-3, atol=1e-3))
