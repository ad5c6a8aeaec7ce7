from lamina.dialects import nn


class ReduceProdOp(nn.ReductionOp, name="reduce_prod"):
    """Product over axes.

    Example: %p = "nn.reduce_prod"(%x) {axes = array<i64: -1>} : (tensor<2x8xf32>) -> tensor<2xf32>
    """

    identity = 1.0

    def combine(self, acc, x):
        return acc * x


class ReduceHalfSumOp(nn.ReductionOp, name="reduce_half_sum"):
    """Half the sum over axes, with a step NumPy cannot reduce (it is wrong
    as a fold, and refused).

    Example: %p = "nn.reduce_half_sum"(%x) {axes = array<i64: -1>} : (tensor<2x8xf32>) -> tensor<2xf32>
    """

    def combine(self, acc, x):
        return acc + x / 2
