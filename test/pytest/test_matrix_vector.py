"""Matrix-vector products (lamina.schedules.matrix_vector): contractions
with fewer rows than the packed register tile, B read in place, match
NumPy for sizes no strip or block divides, on one and two threads, with
batches, epilogues and narrow floats; the kind's choices as data."""

import pytest

import lamina
from lamina.schedules import choose_schedules
from lamina.schedules.matrix_vector import MatrixVectorSchedule, Part
from lamina.targets.cpu_model import CPUModel

from test_schedules import MATMUL, check, linear_source


@pytest.mark.parametrize("m,n,k", [(1, 1000, 1280), (1, 1, 1), (1, 15, 3), (1, 16, 8),
                                   (2, 100, 37), (7, 129, 64), (3, 2048, 5), (1, 64, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_matrix_vector_sizes(m, n, k, threads):
    check(MATMUL.format(m=m, n=n, k=k, t="f32"), threads)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_matrix_vector_narrow_floats(dtype):
    check(MATMUL.format(m=1, n=300, k=96, t=dtype), threads=2)


def test_batched_rows_and_an_epilogue():
    check("""
func.func @main(%x: tensor<3x2x96xf32>, %w: tensor<96x200xf32>, %b: tensor<200xf32>)
    -> tensor<3x2x200xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<3x2x96xf32>, tensor<96x200xf32>) -> tensor<3x2x200xf32>
  %1 = "nn.add"(%0, %b) : (tensor<3x2x200xf32>, tensor<200xf32>) -> tensor<3x2x200xf32>
  %2 = "nn.gelu"(%1) : (tensor<3x2x200xf32>) -> tensor<3x2x200xf32>
  return %2 : tensor<3x2x200xf32>
}""", threads=2)
    check("""
func.func @main(%x: tensor<4x1x48xf32>, %w: tensor<4x48x40xf32>) -> tensor<4x1x40xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x1x48xf32>, tensor<4x48x40xf32>) -> tensor<4x1x40xf32>
  return %0 : tensor<4x1x40xf32>
}""", threads=2)


@pytest.mark.parametrize("threads", [1, 2])
def test_single_rows_of_a_batch(threads):
    """x of 5x1x48 times a weight: the batch of 5 is the product's rows."""
    source = linear_source((5, 1, 48), (48, 64))
    assert {s.kind for s in _schedules(source, threads)} == {"matrix_vector"}
    check(source, threads)


def _schedules(source: str, threads: int) -> list:
    module = lamina.parse(source)
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    return choose_schedules(module.operation, CPUModel(threads=threads))


def test_parts_the_threads_share_and_the_rest():
    (schedule,) = [s for s in _schedules(MATMUL.format(m=1, n=1000, k=1280, t="f32"), 2)
                   if s.kind == "matrix_vector"]
    assert isinstance(schedule, MatrixVectorSchedule)
    # 64-column strips (4 vectors), 14 of them shared by 2 threads, one
    # more on one thread, and the last 40 columns in one step.
    assert schedule.parts == (Part(896, 448, 64), Part(64, 0, 64), Part(40, 0, 40))
    assert schedule.rows == 8
    assert "blocks of 8 rows of B" in schedule.describe()


def test_rows_enough_for_a_register_tile_are_packed():
    kinds = {s.kind for s in _schedules(MATMUL.format(m=8, n=64, k=32, t="f32"), 1)}
    assert kinds == {"contraction"}


def test_b_read_across_n_is_packed():
    # B indexed [n, k]: a strip of C would read B's columns.
    module = lamina.parse("""
func.func @main(%x: tensor<1x64xf32>, %w: tensor<100x64xf32>) -> tensor<1x100xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x100xf32>
  %c = linalg.fill ins(%zero : f32) outs(%init : tensor<1x100xf32>) -> tensor<1x100xf32>
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<1x64xf32>, tensor<100x64xf32>) outs(%c : tensor<1x100xf32>)
      -> tensor<1x100xf32>
  return %0 : tensor<1x100xf32>
}""")
    kinds = {s.kind for s in choose_schedules(module.operation, CPUModel(threads=1))}
    assert "contraction" in kinds and "matrix_vector" not in kinds
