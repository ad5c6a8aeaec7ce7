"""The nn op categories as interfaces: fusion kinds, iteration domains and
indexing maps, asked of detached views (no MLIR), and checked once against
the indexing maps of the linalg ops the lowering builds."""

import pytest
from mlir import ir

import lamina
from lamina.dialects import nn
from lamina.dialects.nn import IndexingMap, IterationDomain
from lamina.types import TensorType


def t(*shape, dtype="f32"):
    return TensorType(tuple(shape), dtype)


def maps(op, *operand_types):
    return [str(m) if m is not None else None for m in op.indexing_maps(*operand_types)]


# -- fusion kinds ----------------------------------------------------------------


@pytest.mark.parametrize("op_class, kind", [
    (nn.ReluOp, "elementwise"), (nn.AddOp, "elementwise"), (nn.CompareOp, "elementwise"),
    (nn.SelectOp, "elementwise"), (nn.CastOp, "elementwise"),
    (nn.GeluOp, "elementwise"), (nn.SiluOp, "elementwise"),
    (nn.ReduceSumOp, "reduction"), (nn.ReduceMeanOp, "reduction"),
    (nn.MatmulOp, "contraction"),
    (nn.Conv2dOp, "convolution"), (nn.MaxPool2dOp, "convolution"), (nn.AvgPool2dOp, "convolution"),
    (nn.TransposeOp, "data_movement"), (nn.ReshapeOp, "data_movement"),
    (nn.ConcatOp, "data_movement"),
    (nn.SoftmaxOp, "opaque"), (nn.LayerNormOp, "opaque"), (nn.AttentionOp, "opaque"),
    (nn.FusedOp, "opaque"),
])
def test_fusion_kinds(op_class, kind):
    assert nn.fusion_kind(op_class) == kind
    assert kind in nn.FUSION_KINDS


def test_every_nn_op_has_a_known_kind():
    for op_class in nn.NN.ops.values():
        assert nn.fusion_kind(op_class) in nn.FUSION_KINDS, op_class


def test_composites_decompose():
    for op_class in nn.NN.ops.values():
        if issubclass(op_class, nn.CompositeOp):
            assert op_class.decompose is not nn.CompositeOp.decompose, op_class


def test_a_new_category_subclass_inherits_the_interface():
    # Not registered (no name=): a user's op class is an op of its category.
    class Softplus(nn.UnaryElementwiseOp):
        def compute(self, x):
            return x

    view = Softplus.detached()
    assert nn.fusion_kind(Softplus) == "elementwise"
    assert view.iteration_domain(t(3, 5)) == IterationDomain((3, 5), ("parallel", "parallel"))
    assert maps(view, t(3, 5)) == ["(d0, d1) -> (d0, d1)"] * 2


def test_an_op_of_no_category_is_opaque():
    assert nn.fusion_kind(object) == "opaque"


# -- indexing maps as data ---------------------------------------------------------


def test_indexing_map_text():
    assert str(IndexingMap.identity(2)) == "(d0, d1) -> (d0, d1)"
    assert str(IndexingMap.of_loops(3, [2, 0])) == "(d0, d1, d2) -> (d2, d0)"
    assert str(IndexingMap(0, ())) == "() -> ()"
    assert str(IndexingMap.broadcast((1, 4), (3, 4))) == "(d0, d1) -> (0, d1)"
    assert str(IndexingMap.broadcast((4,), (2, 3, 4))) == "(d0, d1, d2) -> (d2)"
    assert str(IndexingMap.broadcast((1, 1), (1, 1))) == "(d0, d1) -> (d0, d1)"


def test_iteration_domain_views():
    domain = IterationDomain.parallel((2, 3, 4), reduced=(1,))
    assert domain.iterators == ("parallel", "reduction", "parallel")
    assert domain.reduction_dims == (1,) and domain.parallel_dims == (0, 2)
    assert domain.rank == 3


# -- each category --------------------------------------------------------------------


def test_elementwise_broadcasts_its_operands():
    add = nn.AddOp.detached()
    assert add.iteration_domain(t(4, 1), t(3,)) == IterationDomain.parallel((4, 3))
    assert maps(add, t(4, 1), t(3,)) == ["(d0, d1) -> (d0, 0)", "(d0, d1) -> (d1)",
                                         "(d0, d1) -> (d0, d1)"]


def test_select_and_cast_are_elementwise():
    select = nn.SelectOp.detached()
    assert maps(select, t(4, dtype="i1"), t(3, 1), t(4)) == [
        "(d0, d1) -> (d1)", "(d0, d1) -> (d0, 0)", "(d0, d1) -> (d1)", "(d0, d1) -> (d0, d1)"]
    cast = nn.CastOp.detached(result_types=[t(2, 3, dtype="f16")])
    assert cast.iteration_domain(t(2, 3)) == IterationDomain.parallel((2, 3))
    assert maps(cast, t(2, 3)) == ["(d0, d1) -> (d0, d1)"] * 2


@pytest.mark.parametrize("keepdims, result", [
    (False, "(d0, d1, d2) -> (d1)"), (True, "(d0, d1, d2) -> (0, d1, 0)")])
def test_reduction(keepdims, result):
    op = nn.ReduceMaxOp.detached(axes=(0, -1), keepdims=keepdims)
    assert op.iteration_domain(t(2, 3, 4)) == IterationDomain(
        (2, 3, 4), ("reduction", "parallel", "reduction"))
    assert maps(op, t(2, 3, 4)) == ["(d0, d1, d2) -> (d0, d1, d2)", result]


def test_matmul_is_a_contraction():
    op = nn.MatmulOp.detached()
    assert op.iteration_domain(t(4, 8), t(8, 16)) == IterationDomain(
        (4, 16, 8), ("parallel", "parallel", "reduction"))
    assert maps(op, t(4, 8), t(8, 16)) == [
        "(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"]


def test_batched_matmul_broadcasts_batch_dims():
    op = nn.MatmulOp.detached()
    assert op.iteration_domain(t(2, 1, 4, 8), t(3, 8, 16)).sizes == (2, 3, 4, 16, 8)
    assert maps(op, t(2, 1, 4, 8), t(3, 8, 16)) == [
        "(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)", "(d0, d1, d2, d3, d4) -> (d1, d4, d3)",
        "(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)"]


def test_conv2d_windows_read_the_padded_input():
    op = nn.Conv2dOp.detached(strides=(2, 1), dilations=(1, 2), padding=(1, 1, 1, 1))
    x, w, b = t(1, 3, 8, 8), t(4, 3, 3, 3), t(4)
    assert op.iteration_domain(x, w, b) == IterationDomain(
        (1, 4, 4, 6, 3, 3, 3), ("parallel",) * 4 + ("reduction",) * 3)
    assert maps(op, x, w, b) == [
        "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 + d6 * 2)",
        "(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)",
        "(d0, d1, d2, d3, d4, d5, d6) -> (d1)",
        "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)"]
    assert len(op.indexing_maps(x, w, None)) == 3


def test_grouped_conv2d_has_a_group_loop():
    op = nn.Conv2dOp.detached(groups=2)
    x, w = t(1, 4, 5, 5), t(6, 2, 3, 3)
    assert op.iteration_domain(x, w, None).sizes == (1, 2, 3, 3, 3, 2, 3, 3)
    assert maps(op, x, w, None) == [
        "(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d3 + d6, d4 + d7)",
        "(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1 * 3 + d2, d5, d6, d7)",
        "(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 3 + d2, d3, d4)"]


def test_pooling_is_a_window_op():
    op = nn.AvgPool2dOp.detached(kernel=(2, 2), strides=(2, 2))
    assert op.iteration_domain(t(1, 3, 8, 8)) == IterationDomain(
        (1, 3, 4, 4, 2, 2), ("parallel",) * 4 + ("reduction",) * 2)
    assert maps(op, t(1, 3, 8, 8)) == [
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)",
        "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)"]


def test_data_movement_maps():
    assert maps(nn.TransposeOp.detached(perm=(2, 0, 1)), t(2, 3, 4)) == [
        "(d0, d1, d2) -> (d1, d2, d0)", "(d0, d1, d2) -> (d0, d1, d2)"]
    assert maps(nn.BroadcastToOp.detached(result_types=[t(3, 4)]), t(1, 4)) == [
        "(d0, d1) -> (0, d1)", "(d0, d1) -> (d0, d1)"]
    assert maps(nn.SliceOp.detached(starts=(1, 0), limits=(5, 4), strides=(2, 1)), t(6, 4)) == [
        "(d0, d1) -> (d0 * 2 + 1, d1)", "(d0, d1) -> (d0, d1)"]
    # No affine map says where a reshaped or concatenated element comes from.
    assert maps(nn.ReshapeOp.detached(result_types=[t(4, 6)]), t(6, 4)) == [
        None, "(d0, d1) -> (d0, d1)"]
    assert maps(nn.ConcatOp.detached(axis=0), [t(2, 4), t(3, 4)]) == [
        None, None, "(d0, d1) -> (d0, d1)"]
    assert nn.PadOp.detached(low=(1,), high=(2,)).iteration_domain(t(4)).sizes == (7,)


# -- against the lowering ----------------------------------------------------------------


LOWERED = """
func.func @main(%x: tensor<4x1xf32>, %y: tensor<3xf32>, %z: tensor<2x4x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %0 = "nn.add"(%x, %y) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = "nn.reduce_sum"(%z) {axes = array<i64: 1>} : (tensor<2x4x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<2x3xf32>
}
"""


def test_maps_are_those_of_the_lowered_generics():
    from lamina.pass_registry import get_pass

    module = lamina.parse(LOWERED)
    with module.context:
        expected = [
            [m.to_mlir() for m in nn.AddOp.detached().indexing_maps(t(4, 1), t(3))],
            [m.to_mlir() for m in nn.ReduceSumOp.detached(axes=(1,)).indexing_maps(t(2, 4, 3))],
        ]
        assert get_pass("convert-nn-to-linalg").apply(module.operation)
        generics = [op for op in module.body.operations[0].regions[0].blocks[0].operations
                    if op.operation.name == "linalg.generic"]
        found = [[ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
                 for op in generics]
    assert found == expected
