from lamina.dialects import nn
from lamina.scalar import exp, where


class LeakyReluOp(nn.UnaryElementwiseOp, name="leaky_relu"):
    """Leaky ReLU with slope 0.01: `where(x > 0, x, 0.01 * x)`.

    Example: %y = "nn.leaky_relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return where(x > 0, x, 0.01 * x)


class HalfExpOp(nn.UnaryElementwiseOp, name="half_exp"):
    """`exp(x) / 2`: exp has no arith-only body, so no matmul epilogue takes it.

    Example: %y = "nn.half_exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return exp(x) / 2
