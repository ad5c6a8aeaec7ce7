"""The Python API of sharded programs (lamina.grid, lamina.shard,
lamina.sharding) and its errors; runs on MPI ranks are lit tests
(test/Partition, feature `mpi`)."""

import importlib.metadata
import os

import numpy as np
import pytest

import lamina
import lamina.sharding
from lamina import nn
from lamina.diagnostics import CompileError, UsageError, run_tool
from lamina.sharding import shard_slices
from lamina.tools import lamina_run

HERE = os.path.abspath(__file__)
INPUTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Partition", "Inputs")

g = lamina.grid("g", 2)


@lamina.jit
def megatron(x, w1, w2):
    return nn.relu(x @ lamina.shard(w1, g, [[], [0]])) @ lamina.shard(w2, g, [[0]])


def arrays(*shapes):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def test_shard_annotates_for_users_on_a_declared_grid():
    text = str(megatron.trace(*arrays((4, 8), (8, 16), (16, 8))))
    assert text.count("shard.grid @g(shape = 2)") == 1
    assert "shard.sharding @g split_axes = [[], [0]]" in text
    assert "shard.sharding @g split_axes = [[0]]" in text
    assert text.count("annotate_for_users") == 2


def test_a_sharded_function_runs_whole_in_one_process():
    x, w1, w2 = arrays((4, 8), (8, 16), (16, 8))
    np.testing.assert_allclose(megatron(x, w1, w2), np.maximum(x @ w1, 0) @ w2,
                               rtol=1e-4, atol=1e-5)


def test_shard_errors_are_at_the_callers_line():
    bad_axis = lamina.jit(lambda x: lamina.shard(x, g, [[1]]))
    with pytest.raises(CompileError) as info:
        bad_axis.trace(*arrays((4, 8)))
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.filename == HERE
    assert "grid axis 1 is not an axis of grid @g of shape [2]" in diagnostic.message

    too_many = lamina.jit(lambda x: lamina.shard(x, g, [[], [], [0]]))
    with pytest.raises(CompileError, match="has 3 entries for a tensor of rank 2"):
        too_many.trace(*arrays((4, 8)))

    other = lamina.grid("g", (2, 2))
    twice = lamina.jit(lambda x: lamina.shard(lamina.shard(x, g, [[0]]), other, [[0]]))
    with pytest.raises(CompileError, match=r"grid @g is declared twice, with shapes \[2\] and "
                                           r"\[2, 2\]"):
        twice.trace(*arrays((4, 8)))


def test_grid_declarations_are_checked():
    assert lamina.grid("mesh", (2, 3)).size == 6
    with pytest.raises(ValueError, match="identifier"):
        lamina.grid("2d", 2)
    with pytest.raises(ValueError, match="positive"):
        lamina.grid("g", (2, 0))


def test_shard_slices_follow_the_grid_row_major():
    # Grid 2x3; rank 4 is device (1, 1).
    assert shard_slices((4, 6), [[0], [1]], (2, 3), 4) == (slice(2, 4), slice(2, 4))
    # An axis split over both grid axes: block 1 * 3 + 1 = 4 of 6.
    assert shard_slices((12, 5), [[0, 1]], (2, 3), 4) == (slice(8, 10), slice(0, 5))
    # Replicated axes are whole.
    assert shard_slices((4, 6), [], (2, 3), 5) == (slice(0, 4), slice(0, 6))


class Ranks:
    """An MPI communicator's size and rank, for the checks made before a run."""

    def __init__(self, size):
        self.size = size

    def Get_size(self):
        return self.size

    def Get_rank(self):
        return 0


def test_the_grid_must_have_one_device_per_rank():
    path = os.path.join(INPUTS, "mlp-dp.mlir")
    with pytest.raises(CompileError) as info:
        lamina.sharding.compile(lamina.parse(path), comm=Ranks(3))
    diagnostic = info.value.diagnostics[0]
    assert (os.path.basename(diagnostic.filename), diagnostic.line) == ("mlp-dp.mlir", 3)
    assert diagnostic.message == ("grid @g of shape [2] has 2 devices, but 3 MPI ranks run the "
                                  "program (mpiexec -n 2)")


def test_a_program_without_a_grid_cannot_run_distributed():
    with pytest.raises(CompileError, match="exactly one shard.grid, found 0"):
        lamina.sharding.compile(os.path.join(INPUTS, "..", "..", "..", "examples", "mlp.mlir"),
                                comm=Ranks(2))


def without_mpich(monkeypatch):
    real = importlib.metadata.files

    def files(name):
        if name == "mpich":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "files", files)


def test_missing_mpi_is_a_usage_error(monkeypatch):
    without_mpich(monkeypatch)
    with pytest.raises(UsageError, match=r"pip install 'lamina\[dist\]'"):
        lamina.sharding.mpi_library()


def test_lamina_run_distributed_without_mpi(monkeypatch, capsys, tmp_path):
    without_mpich(monkeypatch)
    output = tmp_path / "out.npz"
    code = run_tool(lamina_run.main, [os.path.join(INPUTS, "mlp-tp.mlir"), "--distributed",
                                      "--random", "--output", str(output)], prog="lamina-run")
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("lamina-run: error: running on MPI needs the MPI library")
    assert "Traceback" not in err
    assert not output.exists()


def test_lamina_run_without_distributed_ignores_shardings(capsys):
    code = run_tool(lamina_run.main, [os.path.join(INPUTS, "mlp-tp.mlir"), "--random",
                                      "--check", "-q"], prog="lamina-run")
    assert code == 0
    assert "check: all results match the reference" in capsys.readouterr().out


def test_ranks_share_the_cores(monkeypatch):
    monkeypatch.delenv("LAMINA_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert lamina.sharding.rank_target("cpu", 2) == "cpu:threads=2"
    assert lamina.sharding.rank_target("cpu:znver4", 4) == "cpu:znver4,threads=1"
    assert lamina.sharding.rank_target("cpu", 8) == "cpu:threads=1"
    # A thread count given by the user stands.
    assert lamina.sharding.rank_target("cpu:threads=3", 2) == "cpu:threads=3"
    monkeypatch.setenv("LAMINA_NUM_THREADS", "4")
    assert lamina.sharding.rank_target("cpu", 2) == "cpu"
