"""An op plugin: nn.hard_sigmoid, with its NumPy meaning and its lowering."""

import numpy as np
from mlir.dialects import arith

from lamina.dialects import nn
from lamina.lowering import nn_to_linalg


class HardSigmoidOp(nn.UnaryElementwiseOp, name="hard_sigmoid"):
    """Piecewise-linear sigmoid: `clip(x / 6 + 0.5, 0, 1)`.

    Example: %y = "nn.hard_sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def compute(self, x):
        return np.clip(x / 6 + 0.5, 0, 1)


@nn_to_linalg.scalar_body(HardSigmoidOp)
def hard_sigmoid(op, x):
    constant = nn_to_linalg.constant
    scaled = arith.addf(arith.divf(x, constant(6.0)), constant(0.5))
    return arith.minimumf(arith.maximumf(scaled, constant(0.0)), constant(1.0))
