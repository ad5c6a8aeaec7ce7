# The Python API under mpiexec: a traced Megatron MLP and a data-parallel
# softmax run on 2 ranks and equal the run in one process (rtol 1e-4, atol
# 1e-5); rank 0 holds the gathered results.
# REQUIRES: mpi
# RUN: mpiexec -n 2 %PYTHON %s | FileCheck %s

import numpy as np

import lamina
import lamina.sharding
from lamina import nn

g = lamina.grid("g", 2)
rank = lamina.sharding.communicator().Get_rank()


def run(f):
    if rank == 0:
        print(f"TEST: {f.__name__}")
    f()


@lamina.jit
def megatron(x, w1, w2):
    h = nn.gelu(x @ lamina.shard(w1, g, [[], [0]]))
    return h @ lamina.shard(w2, g, [[0]])


@lamina.jit
def batch_softmax(x):
    return nn.softmax(lamina.shard(x, g, [[0]]) * 2.0, axis=-1)


def arrays(*shapes):
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


# CHECK-LABEL: TEST: tensor_parallel
# CHECK: equal: True
def tensor_parallel():
    x, w1, w2 = arrays((8, 16), (16, 32), (32, 16))
    f = lamina.sharding.compile(megatron.trace(x, w1, w2))
    y = f(x, w1, w2)
    if rank == 0:
        print("equal:", np.allclose(y, megatron(x, w1, w2), rtol=1e-4, atol=1e-5))
    else:
        assert y is None


# CHECK-LABEL: TEST: data_parallel
# CHECK: local shape: (4, 16)
# CHECK: equal: True
def data_parallel():
    x, = arrays((8, 16))
    f = lamina.sharding.compile(batch_softmax.trace(x))
    y = f(x)
    if rank == 0:
        print("local shape:", f.compiled.inputs[0].shape)
        print("equal:", np.allclose(y, batch_softmax(x), rtol=1e-4, atol=1e-5))


run(tensor_parallel)
run(data_parallel)
