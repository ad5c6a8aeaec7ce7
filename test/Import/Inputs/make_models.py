"""Writes the small ONNX models of the lamina-import tests into a directory
(argv[1]), built with onnx.helper."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tensor(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def initializer(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def weights(*shape):
    return np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)


MODELS = {
    # y = relu(x W^T + b): a Linear layer as torch.onnx.export writes it.
    "gemm": model(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc", transB=1),
         helper.make_node("Relu", ["h"], ["y"], name="act")],
        [tensor("x", [2, 4])], [tensor("y", [2, 3])],
        [initializer("w", weights(3, 4)), initializer("b", weights(3))]),
    # conv, inference batch norm, max pool, global average pool, flatten.
    "conv": model(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1],
                          strides=[2, 2]),
         helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"],
                          name="bn", epsilon=1e-3),
         helper.make_node("MaxPool", ["n"], ["p"], name="pool", kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["y"], name="flatten")],
        [tensor("x", [1, 3, 8, 8])], [tensor("y", [1, 4])],
        [initializer("w", weights(4, 3, 3, 3)), initializer("scale", weights(4) + 2),
         initializer("shift", weights(4)), initializer("mean", weights(4) / 2),
         initializer("var", weights(4) + 1.5)]),
    # Shape arithmetic on int64 values is evaluated at import: only the
    # reshape of the tensor remains.
    "shape": model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
         helper.make_node("Unsqueeze", ["n", "zero_axis"], ["n1"], name="unsqueeze"),
         helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
         helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten")],
        [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])],
        [initializer("zero", np.array(0, np.int64)),
         initializer("zero_axis", np.array([0], np.int64)),
         initializer("minus_one", np.array([-1], np.int64))]),
    # A batch dimension left symbolic by the exporter.
    "dynamic": model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", ["batch", 4])], [tensor("y", ["batch", 4])]),
    # An input with a negative size.
    "negative": model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", [-1, 4])], [tensor("y", [-1, 4])]),
    # An opset newer than any Lamina knows.
    "opset99": model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", [2, 4])], [tensor("y", [2, 4])], opset=99),
    # Attributes the spec defines and Lamina does not implement: Attention's
    # softcap (taken at its default only), MaxPool's storage_order, and
    # opset 6's broadcasting attributes of Add.
    "attributes": model(
        [helper.make_node("LayerNormalization", ["x", "x"], ["a"], name="norm", stash_type=0),
         helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[1, 1],
                          storage_order=1),
         helper.make_node("Add", ["a", "p"], ["y"], name="sum")],
        [tensor("x", [1, 2, 3, 4])], [tensor("y", [1, 2, 3, 4])], opset=23),
    "broadcast": model(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add", broadcast=1, axis=1)],
        [tensor("x", [2, 3, 4]), tensor("b", [3])], [tensor("y", [2, 3, 4])], opset=6),
    # Ops and attributes that nn cannot express, one after another.
    "unsupported": model(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"], name="topk", axis=-1),
         helper.make_node("Relu", ["values"], ["r"], name="relu"),
         helper.make_node("Slice", ["x", "start", "end", "axis", "step"], ["reversed"],
                          name="reverse"),
         helper.make_node("Unique", ["x"], ["m"]),
         helper.make_node("Add", ["r", "m"], ["y"], name="sum")],
        [tensor("x", [2, 4])], [tensor("y", [2, 2]), tensor("reversed", [2, 4])],
        [initializer("k", np.array([2], np.int64)),
         initializer("start", np.array([-1], np.int64)),
         initializer("end", np.array([-5], np.int64)),
         initializer("axis", np.array([1], np.int64)),
         initializer("step", np.array([-1], np.int64))]),
    # A QLinearConv: uint8 activations, int8 weights per output channel,
    # an int32 bias, padding.
    "qlinear_conv": model(
        [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"],
                          ["y"], name="qconv", pads=[1, 1, 1, 1])],
        [tensor("x", [1, 2, 4, 4], TensorProto.UINT8)],
        [tensor("y", [1, 3, 4, 4], TensorProto.UINT8)],
        [initializer("sx", np.array(0.05, np.float32)), initializer("zx", np.uint8(10)),
         initializer("w", np.full((3, 2, 3, 3), 2, np.int8)),
         initializer("sw", np.array([0.1, 0.2, 0.3], np.float32)),
         initializer("zw", np.zeros(3, np.int8)),
         initializer("sy", np.array(0.5, np.float32)), initializer("zy", np.uint8(7)),
         initializer("b", np.array([100, -100, 5], np.int32))], opset=13),
    # QLinear ops that are not imported: a float bias, an output zero
    # point per channel.
    "qlinear_errors": model(
        [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sx", "zw", "sx", "zx", "fb"],
                          ["y"], name="float_bias"),
         helper.make_node("QLinearMatMul", ["a", "sx", "zx", "m", "sx", "zw", "sx", "zy3"],
                          ["z"], name="zero_per_channel")],
        [tensor("x", [1, 3, 4, 4], TensorProto.INT8), tensor("a", [2, 3], TensorProto.INT8)],
        [tensor("y", [1, 3, 2, 2], TensorProto.INT8), tensor("z", [2, 3], TensorProto.INT8)],
        [initializer("sx", np.array(0.05, np.float32)), initializer("zx", np.int8(0)),
         initializer("w", np.ones((3, 3, 3, 3), np.int8)), initializer("zw", np.int8(0)),
         initializer("fb", np.zeros(3, np.float32)), initializer("m", np.ones((3, 3), np.int8)),
         initializer("zy3", np.zeros(3, np.int8))], opset=13),
}


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for name, proto in MODELS.items():
        onnx.save(proto, os.path.join(directory, f"{name}.onnx"))
    # Weights in a file beside the model, which is then removed.
    onnx.save_model(MODELS["gemm"], os.path.join(directory, "external.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="external.data", size_threshold=0)
    os.remove(os.path.join(directory, "external.data"))
    with open(os.path.join(directory, "not-onnx.onnx"), "w") as f:
        f.write("func.func @main() {\n  return\n}\n")


if __name__ == "__main__":
    main()
