"""ONNX models to Lamina modules of nn ops.

    module = lamina.from_onnx("model.onnx")                       # weights as arguments
    y = lamina.compile(module)(*parameters(module, "model.onnx"), x)
    module = lamina.from_onnx("model.onnx", params="constants")   # weights as constants
    y = lamina.compile(module)(x)

The model is checked (`onnx.checker`), shapes are inferred (ONNX shape
inference), and the graph becomes one public `func.func @main`. With
`params="arguments"` (the default) its arguments are the float
initializers the graph uses, in the order the model lists them, each
naming its initializer in a `lamina.parameter` attribute (`parameters`
gives their arrays), then the graph's inputs, in order, each naming its
input in `lamina.input`; with `params="constants"` the initializers are
`arith.constant`s and the function takes the inputs only. Initializers of
integer type, `Constant` nodes and every computation on them alone (shape
arithmetic: `Shape`, `Gather`, `Concat`, ...) are evaluated here with NumPy,
so the nn program holds only the tensors that exist at run time.

Assumptions: static shapes (a graph input with a dynamic dimension is an
error naming it), runtime tensors of f32, f16, bf16, i32, i64 or bool
(integer inputs such as token ids: their lookups are `nn.gather`s, with
negative indices counted from the end as ONNX defines), and of int8 and
uint8 where QuantizeLinear and DequantizeLinear make and read them
(`nn.quantize`, `nn.dequantize`; their weights stay quantised constants), the default
ONNX domain at opsets 1 to the newest the installed onnx package defines.
Each conversion declares the attributes it implements and those it takes
at the spec's default only (`converts`); any other attribute on a node is
an error naming it, never ignored, and an attribute a node leaves out has
the spec's default at the model's opset. Every node that cannot become nn
ops (an op Lamina does not map, an attribute or an attribute value nn
cannot express) is collected, and all of them are reported in one error,
each by its index in the graph, its name and its op type. ONNX has no source lines: the location of each nn op is a
name location holding the node's name (its op type where it has none)
around `MODEL:INDEX:1`, the node's index in the graph counted from 1, so
that a later error at the op names the node.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import func

from lamina import nn as builders
from lamina import quantized_products
from lamina.context import make_context, verify
from lamina.diagnostics import CompileError, Diagnostic, DiagnosticCollector
from lamina.dialects import nn
from lamina.dialects.nn import ELEMENTWISE_FLOATS, NN
from lamina.importers import indexing
from lamina.types import TensorType, VerifyError, element_type_name, numpy_dtype

PARAMS = ("arguments", "constants")

# What a Gather with scattered indices may become (one slice per index).
MAX_GATHER_SLICES = 64


class ModelDiagnostic(Diagnostic):
    """An error about a model file as a whole, or about its nodes, which
    have no lines: `model.onnx: error: message`."""

    def __init__(self, filename: str, message: str):
        super().__init__(filename, 0, 0, "error", message)

    def format(self) -> str:
        return f"{self.filename}: {self.severity}: {self.message}"


def _model_error(source_name: str, message: str) -> CompileError:
    return CompileError([ModelDiagnostic(source_name, message)])


class _NodeProblem(Exception):
    """A node that cannot become nn ops, and why."""


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("lamina.from_onnx needs the onnx package: "
                          "pip install 'lamina[onnx]'") from None
    return onnx


def load_model(path, source_name: str | None = None):
    """The checked ONNX model at `path` (or the ModelProto or the bytes
    given), with
    inferred shapes. Raises OSError for a file that cannot be read and
    CompileError for one that is no valid ONNX model."""
    onnx = _onnx()
    from google.protobuf.message import DecodeError

    if isinstance(path, onnx.ModelProto):
        model, source_name = path, source_name or "<onnx>"
    else:
        if isinstance(path, bytes):
            data, source_name = path, source_name or "<onnx>"
        else:
            source_name = source_name or os.fspath(path)
            with open(path, "rb") as f:
                data = f.read()
        try:
            model = onnx.load_model_from_string(data)
        except (DecodeError, RuntimeError, ValueError) as error:
            raise _model_error(source_name, f"not an ONNX model (cannot decode it: "
                                            f"{error})") from None
        if not isinstance(path, bytes):
            _load_external_data(model, os.path.dirname(os.path.abspath(path)), source_name)
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise _model_error(source_name, f"not a valid ONNX model: {first}") from None
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except (onnx.shape_inference.InferenceError, RuntimeError, ValueError) as error:
        raise _model_error(source_name, f"ONNX shape inference failed: {error}") from None
    return model, source_name


def _load_external_data(model, directory: str, source_name: str):
    """Reads the initializers a model stores in files beside it; a file
    that is missing or unreadable is an error naming it and its tensor."""
    onnx = _onnx()
    external = [t for t in model.graph.initializer
                if t.data_location == onnx.TensorProto.EXTERNAL]
    for t in external:
        location = next((entry.value for entry in t.external_data if entry.key == "location"),
                        None)
        if location is None:
            raise _model_error(source_name, f"initializer '{t.name}' is stored outside the "
                                            "model, in no file it names")
        if not os.path.isfile(os.path.join(directory, location)):
            raise _model_error(source_name, f"initializer '{t.name}' is stored in '{location}', "
                                            f"which is not a file in {directory}")
    if external:
        try:
            onnx.load_external_data_for_model(model, directory)
        except (OSError, ValueError, onnx.checker.ValidationError) as error:
            raise _model_error(source_name, f"cannot read the model's external data: "
                                            f"{error}") from None


def _used_float_initializers(model) -> list:
    """The float initializers that some node or graph output uses, in the
    model's order: the arguments that `params="arguments"` adds."""
    onnx = _onnx()
    used = {name for node in model.graph.node for name in node.input}
    used |= {output.name for output in model.graph.output}
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
    return [t for t in model.graph.initializer if t.name in used and t.data_type in floats]


def parameters(module: ir.Module, model, name: str = "main") -> list[np.ndarray]:
    """The arrays of the initializers that function `name` of a module
    imported with `params="arguments"` takes before the inputs, from the
    ONNX model (a path or an `onnx.ModelProto`)."""
    onnx = _onnx()
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(model)
    function = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == name)
    arrays = {t.name: t for t in model.graph.initializer}
    names = []
    if "arg_attrs" in function.attributes:
        for attributes in ir.ArrayAttr(function.attributes["arg_attrs"]):
            attributes = ir.DictAttr(attributes)
            if "lamina.parameter" in attributes:
                names.append(ir.StringAttr(attributes["lamina.parameter"]).value)
    return [onnx.numpy_helper.to_array(arrays[n]) for n in names]


def from_onnx(path, params: str = "arguments", context: ir.Context | None = None,
              source_name: str | None = None) -> ir.Module:
    """A verified Lamina module of nn ops from the ONNX model at `path` (or
    an `onnx.ModelProto`, or its bytes). `params="arguments"` makes the
    float initializers arguments of `@main` before the graph's inputs
    (`parameters(module, path)` are their arrays); `params="constants"`
    makes them constants. Raises OSError
    when the file cannot be read and CompileError, listing every problem,
    when the model cannot be imported."""
    if params not in PARAMS:
        raise ValueError(f"params must be one of {', '.join(PARAMS)}, got {params!r}")
    model, source_name = load_model(path, source_name)
    return _Importer(model, source_name, params, context or make_context()).run()


# ---------------------------------------------------------------------------
# Element types.


def _onnx_dtype_name(elem_type: int) -> str:
    return _onnx().TensorProto.DataType.Name(elem_type).lower()


# The element types of nn tensors, and how messages name them.
_NN_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "ui8", "i16", "ui16", "i32", "ui32",
             "i64", "ui64")
_NN_TYPE_NAMES = ("float, float16, bfloat16, double, int8, uint8, int16, uint16, int32, uint32, "
                  "int64, uint64 or bool")


def _nn_dtype(elem_type: int) -> str | None:
    """The nn element type of an ONNX element type, or None."""
    tensor = _onnx().TensorProto
    return {tensor.FLOAT: "f32", tensor.DOUBLE: "f64", tensor.FLOAT16: "f16",
            tensor.BFLOAT16: "bf16",
            tensor.BOOL: "i1", tensor.INT8: "i8", tensor.UINT8: "ui8", tensor.INT16: "i16",
            tensor.UINT16: "ui16", tensor.INT32: "i32", tensor.UINT32: "ui32",
            tensor.INT64: "i64", tensor.UINT64: "ui64"}.get(elem_type)


def _nn_dtype_of_array(array: np.ndarray) -> str | None:
    try:
        name = element_type_name(array.dtype)
    except ValueError:
        return None
    return name if name in _NN_TYPES else None


def _type_of(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


# ---------------------------------------------------------------------------
# The importer.


@dataclass
class _Node:
    index: int
    proto: object
    attrs: dict
    # The attributes the conversion chosen for the node declares, and the
    # spec's defaults at the model's opset (None where the spec has none).
    declared: frozenset = frozenset()
    defaults: dict = field(default_factory=dict)

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def label(self) -> str:
        name = f" '{self.proto.name}'" if self.proto.name else ""
        domain = f"{self.proto.domain}." if self.proto.domain not in ("", "ai.onnx") else ""
        return f"node #{self.index}{name} ({domain}{self.op_type})"

    def attr(self, name: str, default=None):
        """The value of attribute `name`: the node's, else the spec's
        default at the model's opset, else `default` (for an attribute
        whose default the spec states in words, a kernel's shape, or that
        an older opset lacks)."""
        if name not in self.declared:
            raise AssertionError(f"the conversion of {self.op_type} reads attribute '{name}', "
                                 "which it does not declare")
        if name in self.attrs:
            return self.attrs[name]
        spec = self.defaults.get(name)
        if spec is not None and default is not None and not _same_value(spec, default):
            raise AssertionError(f"the conversion of {self.op_type} gives attribute '{name}' "
                                 f"the default {default!r}; the spec's is {spec!r}")
        return spec if spec is not None else default

    def input(self, i: int) -> str | None:
        """The name of input `i`, or None where it is absent or empty."""
        inputs = self.proto.input
        return inputs[i] if i < len(inputs) and inputs[i] else None


_POISONED = object()  # a value whose producer could not be imported


class _Importer:
    def __init__(self, model, source_name: str, params: str, context: ir.Context):
        self.onnx = _onnx()
        self.model = model
        self.graph = model.graph
        self.source_name = source_name
        self.params = params
        self.context = context
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          1)
        newest = self.onnx.defs.onnx_opset_version()
        if not 1 <= self.opset <= newest:
            self._fail(f"opset {self.opset} of the default ONNX domain is not supported "
                       f"(Lamina imports opsets 1 to {newest})")
        # name -> ir.Value (a runtime tensor), np.ndarray (known here) or _POISONED
        self.values: dict = {}
        self.parameter_arrays: dict[str, np.ndarray] = {}
        self.constants: dict[tuple, ir.Value] = {}
        self.problems: list[str] = []
        self.location = None
        self.inferred = {}
        for info in list(self.graph.value_info) + list(self.graph.output):
            shape = self._static_shape(info.type)
            if shape is not None:
                self.inferred[info.name] = shape
        self.used = {name for node in self.graph.node for name in node.input}
        self.used |= {output.name for output in self.graph.output}

    # -- errors and locations ------------------------------------------------

    def _fail(self, message: str):
        raise _model_error(self.source_name, message)

    def _node_location(self, node: _Node) -> ir.Location:
        return ir.Location.name(node.proto.name or node.op_type,
                                childLoc=ir.Location.file(self.source_name, node.index + 1, 1))

    @staticmethod
    def _static_shape(type_proto) -> tuple[int, ...] | None:
        if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
            return None
        dims = type_proto.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            return None
        return tuple(d.dim_value for d in dims)

    # -- the graph's inputs --------------------------------------------------

    def _input_types(self) -> list[tuple[str, TensorType]]:
        initializer_names = {t.name for t in self.graph.initializer}
        problems, types = [], []
        for graph_input in self.graph.input:
            if graph_input.name in initializer_names:
                continue
            tensor_type = graph_input.type.tensor_type
            if not graph_input.type.HasField("tensor_type"):
                problems.append(f"input '{graph_input.name}' is not a tensor")
                continue
            dtype = _nn_dtype(tensor_type.elem_type)
            if dtype is None:
                problems.append(f"input '{graph_input.name}' has element type "
                                f"{_onnx_dtype_name(tensor_type.elem_type)}; nn tensors are "
                                f"{_NN_TYPE_NAMES}")
            if not tensor_type.HasField("shape"):
                problems.append(f"input '{graph_input.name}' has no shape; Lamina needs "
                                "static shapes")
                continue
            dynamic = [(i, d.dim_param) for i, d in enumerate(tensor_type.shape.dim)
                       if not d.HasField("dim_value")]
            if dynamic:
                dims = ", ".join(f"{i}" + (f" ('{p}')" if p else "") for i, p in dynamic)
                plural = "s" if len(dynamic) > 1 else ""
                problems.append(f"input '{graph_input.name}' has a dynamic dimension{plural} "
                                f"{dims}; "
                                "Lamina needs static shapes (export the model with fixed "
                                "input shapes)")
                continue
            negative = [(i, d.dim_value) for i, d in enumerate(tensor_type.shape.dim)
                        if d.dim_value < 0]
            if negative:
                dims = ", ".join(f"{i} ({size})" for i, size in negative)
                problems.append(f"input '{graph_input.name}' has a negative size in dimension"
                                f"{'s' if len(negative) > 1 else ''} {dims}")
                continue
            if dtype is not None:
                shape = tuple(d.dim_value for d in tensor_type.shape.dim)
                types.append((graph_input.name, TensorType(shape, dtype)))
        if problems:
            self._fail("\n".join(problems) if len(problems) == 1 else
                       f"{len(problems)} inputs cannot be imported:\n  " + "\n  ".join(problems))
        return types

    # -- the whole graph -----------------------------------------------------

    def run(self) -> ir.Module:
        input_types = self._input_types()
        arrays = {t.name: self.onnx.numpy_helper.to_array(t) for t in self.graph.initializer}
        arguments = [t.name for t in _used_float_initializers(self.model)] \
            if self.params == "arguments" else []
        with self.context, DiagnosticCollector(self.context, self.source_name) as diagnostics, \
                ir.Location.file(self.source_name, 1, 1) as top:
            module = ir.Module.create(loc=top)
            argument_types = [TensorType(arrays[n].shape, _nn_dtype_of_array(arrays[n])).to_mlir()
                              for n in arguments] + [t.to_mlir() for _, t in input_types]
            names = arguments + [n for n, _ in input_types]
            with ir.InsertionPoint(module.body):
                function = func.FuncOp("main", ir.FunctionType.get(argument_types, []))
                function.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(
                    {"lamina.parameter" if n in arrays else "lamina.input": ir.StringAttr.get(n)})
                    for n in names])
                block = function.add_entry_block(
                    [ir.Location.name(n, childLoc=top) for n in names])
                for name, argument in zip(names, block.arguments):
                    self.values[name] = argument
                for name, array in arrays.items():
                    if name in arguments:
                        self.parameter_arrays[name] = array
                    else:
                        self.values[name] = array
                with ir.InsertionPoint(block):
                    self._import_nodes()
                    results = self._results()
                    func.ReturnOp(results)
                function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                    argument_types, [r.type for r in results]))
            if not verify(module.operation):
                raise CompileError(diagnostics.errors)
        return module

    def _import_nodes(self):
        for index, proto in enumerate(self.graph.node):
            node = _Node(index, proto, {a.name: self.onnx.helper.get_attribute_value(a)
                                        for a in proto.attribute})
            convert = _CONVERTERS.get(node.op_type)
            if proto.domain not in ("", "ai.onnx") or convert is None:
                self.problems.append(f"{node.label}: not supported")
                self._poison(node)
                continue
            if any(self.values.get(name) is _POISONED for name in proto.input if name):
                self._poison(node)
                continue
            missing = [name for name in proto.input if name and name not in self.values
                       and name not in self.parameter_arrays]
            if missing:
                self.problems.append(f"{node.label}: input '{missing[0]}' is produced by no "
                                     "node")
                self._poison(node)
                continue
            self.location = self._node_location(node)
            try:
                with self.location:
                    outputs = self._evaluate(node, convert)
                    self._bind(node, outputs)
            except _NodeProblem as problem:
                self.problems.append(f"{node.label}: {problem}")
                self._poison(node)
            except Exception as error:  # a Lamina bug: say so at the node, go on
                if os.environ.get("LAMINA_DEBUG"):
                    raise
                self.problems.append(f"{node.label}: internal error: "
                                     f"{type(error).__name__}: {error}")
                self._poison(node)
        if self.problems:
            count = len(self.problems)
            self._fail(f"{count} ONNX node{'s' if count > 1 else ''} cannot be imported:\n  "
                       + "\n  ".join(self.problems))

    def _poison(self, node: _Node):
        for name in node.proto.output:
            if name:
                self.values[name] = _POISONED

    def _evaluate(self, node: _Node, convert):
        present = [name for name in node.proto.input if name]
        fold = _FOLDERS.get(node.op_type)
        if fold is not None and all(isinstance(self.values.get(n), np.ndarray) for n in present):
            self._check_attributes(node, _FOLDER_ATTRIBUTES[node.op_type])
            outputs = fold(self, node)
            outputs = [np.asarray(o) for o in outputs] if isinstance(outputs, list) else \
                np.asarray(outputs)
        else:
            self._check_attributes(node, _CONVERTER_ATTRIBUTES[node.op_type])
            outputs = convert(self, node)
        return outputs if isinstance(outputs, list) else [outputs]

    def _check_attributes(self, node: _Node, declaration: "_Attributes"):
        """Rejects every attribute of `node` the conversion does not
        implement, and every one it takes at the spec's default only that
        has another value; then gives the node its declared attributes and
        the spec's defaults."""
        node.defaults = _spec_defaults(node.op_type, self.opset)
        node.declared = declaration.implemented | declaration.defaults_only
        unknown = sorted(name for name in node.attrs if name not in node.declared)
        if unknown:
            names = ", ".join(f"'{name}'" for name in unknown)
            raise _NodeProblem(f"attribute{'s' if len(unknown) > 1 else ''} {names} "
                               f"{'are' if len(unknown) > 1 else 'is'} not supported")
        for name in sorted(declaration.defaults_only & set(node.attrs)):
            default = node.defaults.get(name)
            if default is None or not _same_value(node.attrs[name], default):
                shown = "none" if default is None else _shown(default)
                raise _NodeProblem(f"attribute '{name}' = {_shown(node.attrs[name])} is not "
                                   f"supported (only its default, {shown})")

    def _bind(self, node: _Node, outputs: list):
        names = list(node.proto.output)
        for i, name in enumerate(names):
            if not name:
                continue
            if i >= len(outputs) or outputs[i] is None:
                if name in self.used:
                    raise _NodeProblem(f"output #{i} ('{name}') is not supported")
                continue
            value = outputs[i]
            shape = value.shape if isinstance(value, np.ndarray) else _type_of(value).shape
            expected = self.inferred.get(name)
            if expected is not None and tuple(shape) != expected:
                raise _NodeProblem(f"output '{name}' would have shape {list(shape)}; the "
                                   f"model (or ONNX shape inference) says {list(expected)}")
            self.values[name] = value

    def _results(self) -> list[ir.Value]:
        results = []
        for output in self.graph.output:
            value = self.values.get(output.name)
            if value is None and output.name in self.parameter_arrays:
                value = self.parameter_arrays[output.name]
            self.location = ir.Location.name(output.name, childLoc=ir.Location.file(
                self.source_name, 1, 1))
            try:
                results.append(self.tensor(output.name) if not isinstance(value, ir.Value)
                               else value)
            except _NodeProblem as problem:
                self._fail(f"output '{output.name}': {problem}")
        return results

    # -- values --------------------------------------------------------------

    def static(self, name: str | None, what: str = "input") -> np.ndarray | None:
        """The value of `name` known at import time (None for an absent
        input); raises _NodeProblem for a runtime tensor."""
        if name is None:
            return None
        value = self.values.get(name)
        if isinstance(value, np.ndarray):
            return value
        if name in self.parameter_arrays:
            return self.parameter_arrays[name]
        raise _NodeProblem(f"{what} '{name}' must be known when the model is imported "
                           "(a constant or an initializer), not computed at run time")

    def is_static(self, name: str | None) -> bool:
        return isinstance(self.values.get(name), np.ndarray)

    def shape(self, name: str) -> tuple[int, ...]:
        value = self.values[name]
        return tuple(value.shape) if isinstance(value, np.ndarray) else _type_of(value).shape

    def dtype(self, name: str) -> str | None:
        value = self.values[name]
        return _nn_dtype_of_array(value) if isinstance(value, np.ndarray) else \
            _type_of(value).dtype

    def tensor(self, name: str, dtype: str | None = None) -> ir.Value:
        """`name` as a runtime tensor: a value known here becomes a
        constant (of `dtype` where given, as for a scalar operand)."""
        value = self.values.get(name)
        if isinstance(value, ir.Value):
            return value
        return self.constant(value, dtype, name)

    def constant(self, array: np.ndarray, dtype: str | None = None,
                 name: str | None = None) -> ir.Value:
        array = np.asarray(array)
        if dtype is None:
            dtype = _nn_dtype_of_array(array)
            if dtype is None:
                what = f"'{name}'" if name else "a constant"
                raise _NodeProblem(f"{what} of element type {array.dtype} would be a tensor at "
                                   f"run time; nn tensors are {_NN_TYPE_NAMES}")
        key = (name, dtype) if name is not None else None
        if key is not None and key in self.constants:
            return self.constants[key]
        value = builders.constant(array, dtype)
        value.owner.location = self.location
        if key is not None:
            self.constants[key] = value
        return value

    def op(self, name: str, *operands, result_type: TensorType | None = None,
           **attrs) -> ir.Value:
        """An nn op at the current node's location."""
        try:
            return NN.ops[name].build(*operands, result_type=result_type, loc=self.location,
                                      **attrs)
        except VerifyError as error:
            raise _NodeProblem(f"'nn.{name}' op {error}") from None

    def reshape(self, x: ir.Value, shape) -> ir.Value:
        shape = tuple(int(d) for d in shape)
        if _type_of(x).shape == shape:
            return x
        return self.op("reshape", x, result_type=_type_of(x).with_shape(shape))

    def scalar(self, value: float, like: ir.Value) -> ir.Value:
        return self.constant(np.array(value), _type_of(like).dtype)

    def operands(self, node: _Node) -> list[ir.Value]:
        """Every present input as a tensor; inputs known here take the
        element type of the first runtime one."""
        names = [n for n in node.proto.input if n]
        dtype = next((self.dtype(n) for n in names if isinstance(self.values.get(n), ir.Value)),
                     None)
        return [self.tensor(n, dtype) for n in names]


# ---------------------------------------------------------------------------
# Conversions: one function per op type, (importer, node) -> output values.

_CONVERTERS: dict[str, Callable] = {}
_FOLDERS: dict[str, Callable] = {}


@dataclass(frozen=True)
class _Attributes:
    """The ONNX attributes a conversion implements, and those it takes at
    the spec's default value only (another value is an error)."""

    implemented: frozenset = frozenset()
    defaults_only: frozenset = frozenset()


_CONVERTER_ATTRIBUTES: dict[str, _Attributes] = {}
_FOLDER_ATTRIBUTES: dict[str, _Attributes] = {}


def _declaration(op_type: str, attributes, defaults_only) -> _Attributes:
    """The attributes of `op_type` among names given for all the op types
    of a registration (a tuple) or for each (a dict)."""
    pick = lambda names: frozenset(names.get(op_type, ()) if isinstance(names, dict) else names)
    return _Attributes(pick(attributes), pick(defaults_only))


def converts(*op_types: str, attributes=(), defaults_only=()):
    """Registers the conversion of `op_types` to nn ops. `attributes` are
    the ONNX attributes it implements (in every opset), `defaults_only`
    those it takes at the spec's default only (each a tuple for all of
    `op_types`, or a dict of tuples by op type); any other attribute on a
    node is an error naming it. An attribute a node leaves out has the
    spec's default (`_Node.attr`)."""
    def register(function):
        for op_type in op_types:
            _CONVERTERS[op_type] = function
            _CONVERTER_ATTRIBUTES[op_type] = _declaration(op_type, attributes, defaults_only)
        return function
    return register


def folds(*op_types: str, attributes=(), defaults_only=()):
    """Registers a NumPy evaluation, used when every input is known (the
    attributes as for `converts`)."""
    def register(function):
        for op_type in op_types:
            _FOLDERS[op_type] = function
            _FOLDER_ATTRIBUTES[op_type] = _declaration(op_type, attributes, defaults_only)
            if op_type not in _CONVERTERS:
                _CONVERTERS[op_type] = _fold_only
                _CONVERTER_ATTRIBUTES[op_type] = _FOLDER_ATTRIBUTES[op_type]
        return function
    return register


def declared_attributes() -> dict[str, list[_Attributes]]:
    """Every op type's attribute declarations (its conversion's, then its
    NumPy evaluation's where it has one): for tests against the spec."""
    return {op_type: [_CONVERTER_ATTRIBUTES[op_type]]
            + ([_FOLDER_ATTRIBUTES[op_type]] if op_type in _FOLDER_ATTRIBUTES else [])
            for op_type in _CONVERTERS}


@functools.lru_cache(maxsize=None)
def _spec_defaults(op_type: str, opset: int) -> dict:
    """The default value of each attribute of `op_type` at `opset` in the
    spec, None where it states none."""
    onnx = _onnx()
    try:
        schema = onnx.defs.get_schema(op_type, opset)
    except onnx.defs.SchemaError:
        return {}
    return {name: onnx.helper.get_attribute_value(attribute.default_value)
            if attribute.default_value.type else None
            for name, attribute in schema.attributes.items()}


def _same_value(value, default) -> bool:
    if isinstance(value, float) or isinstance(default, float):
        return np.float32(value) == np.float32(default)
    return value == default


def _shown(value) -> str:
    return value.decode() if isinstance(value, bytes) else repr(value)


def _fold_only(im: _Importer, node: _Node):
    runtime = next(n for n in node.proto.input if n and not im.is_static(n))
    raise _NodeProblem(f"input '{runtime}' is a tensor computed at run time; Lamina "
                       f"evaluates {node.op_type} only on values known when the model "
                       "is imported")


def _item(array: np.ndarray) -> float:
    """The value of a one-element array (a scalar input)."""
    if array.size != 1:
        raise _NodeProblem(f"expected one value, got an array of shape {list(array.shape)}")
    return float(array.reshape(-1)[0])


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise _NodeProblem(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Erf": "erf", "Sqrt": "sqrt",
          "Exp": "exp", "Log": "log", "Neg": "neg", "Abs": "abs", "Sin": "sin", "Cos": "cos"}


@converts(*_UNARY)
def _unary(im, node):
    return im.op(_UNARY[node.op_type], im.tensor(node.input(0)))


# Dropout: `seed` and `ratio` mean nothing in inference; before opset 7,
# `is_test` = 0 (the default) asks for training.
@converts("Identity", "Dropout", attributes={"Dropout": ("seed", "ratio", "is_test")})
def _identity(im, node):
    if node.op_type == "Dropout" and (
            (node.input(2) and im.static(node.input(2)).any())
            or (im.opset < 7 and not node.attr("is_test"))):
        raise _NodeProblem("dropout in training mode is not supported")
    x = im.values[node.input(0)]
    if node.op_type == "Dropout" and len(node.proto.output) > 1 and im.opset >= 7:
        # In inference every element is kept: the mask is all true.
        return [x, np.ones(im.shape(node.input(0)), np.bool_)]
    return x


@converts("Reciprocal")
def _reciprocal(im, node):
    x = im.tensor(node.input(0))
    return im.op("div", im.scalar(1.0, x), x)


@converts("Gelu", attributes=("approximate",))
def _gelu(im, node):
    return im.op("gelu", im.tensor(node.input(0)), approximate=node.attr("approximate").decode())


@converts("HardSigmoid", "HardSwish", attributes={"HardSigmoid": ("alpha", "beta")})
def _hard_sigmoid(im, node):
    x = im.tensor(node.input(0))
    alpha, beta = (1 / 6, 0.5) if node.op_type == "HardSwish" else (
        node.attr("alpha"), node.attr("beta"))
    y = im.op("add", im.op("mul", x, im.scalar(alpha, x)), im.scalar(beta, x))
    y = im.op("maximum", im.op("minimum", y, im.scalar(1.0, x)), im.scalar(0.0, x))
    return im.op("mul", x, y) if node.op_type == "HardSwish" else y


@converts("LeakyRelu", attributes=("alpha",))
def _leaky_relu(im, node):
    x = im.tensor(node.input(0))
    negative = im.op("compare", x, im.scalar(0.0, x), predicate="lt")
    return im.op("select", negative, im.op("mul", x, im.scalar(node.attr("alpha"), x)), x)


@converts("Clip", attributes=("min", "max"))
def _clip(im, node):
    x = im.tensor(node.input(0))
    if im.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        # Bounds known here, or scalar tensors computed at run time.
        low, high = [None if node.input(i) is None
                     else _item(im.static(node.input(i))) if im.is_static(node.input(i))
                     else im.reshape(im.tensor(node.input(i)), ()) for i in (1, 2)]
    bound = lambda value: value if isinstance(value, ir.Value) else im.scalar(value, x)
    low, high = [None if b is None else bound(b) for b in (low, high)]
    present = [b for b in (low, high) if b is not None]
    (x, *present), narrow = _widened(im, [x] + present)
    if narrow == "ui64":
        raise _NodeProblem("Clip of uint64 is not supported")
    if low is not None:
        x = im.op("maximum", x, present.pop(0))
    if high is not None:
        x = im.op("minimum", x, present.pop(0))
    return _narrowed(im, x, narrow)


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "maximum",
           "Min": "minimum"}
_COMPARE = {"Equal": "eq", "Less": "lt", "LessOrEqual": "le", "Greater": "gt",
            "GreaterOrEqual": "ge"}


# Before opset 7, `broadcast` = 1 (with `axis`) broadcasts otherwise than
# NumPy; at its default (0) the shapes are equal.
_BROADCAST = {op_type: ("broadcast",) for op_type in (
    "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Equal", "Less", "Greater")}


# nn's arithmetic takes i32 and i64 integers: the narrower ones are computed
# on widened, exactly, and the result cast back (which wraps as ONNX's
# integer arithmetic does); uint64 as the int64 of its bits, where sums,
# differences and products wrap alike and an order is the signed order of
# the bits with the top one flipped.
_WIDENED = {"i8": "i32", "ui8": "i32", "i16": "i32", "ui16": "i32", "ui32": "i64",
            "ui64": "i64"}
_INT64_MIN = np.iinfo(np.int64).min


def _widened(im, operands: list[ir.Value]) -> tuple[list[ir.Value], str | None]:
    """The operands widened where their type is narrower than nn's
    integers, and that type (None where they are left as they are)."""
    dtype = _type_of(operands[0]).dtype
    wide = _WIDENED.get(dtype)
    if wide is None:
        return operands, None
    return [im.op("cast", v, result_type=_type_of(v).with_dtype(wide)) for v in operands], dtype


def _narrowed(im, value: ir.Value, dtype: str | None) -> ir.Value:
    if dtype is None:
        return value
    return im.op("cast", value, result_type=_type_of(value).with_dtype(dtype))


def _ordered(im, value: ir.Value, dtype: str | None) -> ir.Value:
    """A widened value whose signed order is its unsigned one (uint64's)."""
    return im.op("add", value, im.scalar(_INT64_MIN, value)) if dtype == "ui64" else value


def _integer_division(im, lhs, rhs, dtype: str) -> ir.Value:
    """lhs / rhs rounded toward zero, through double: exact for operands
    of at most 32 bits (a quotient that is no integer is at least 1/|lhs|
    from one, far more than double's rounding)."""
    if dtype in ("i64", "ui64"):
        raise _NodeProblem(f"the division of {_onnx_name(dtype)} integers is not supported")
    quotient = im.op("div", *[im.op("cast", v, result_type=_type_of(v).with_dtype("f64"))
                              for v in (lhs, rhs)])
    return im.op("cast", quotient, result_type=_type_of(quotient).with_dtype(_type_of(lhs).dtype))


def _onnx_name(dtype: str) -> str:
    return {"f32": "float", "f16": "float16", "bf16": "bfloat16", "f64": "double", "i1": "bool",
            "i8": "int8", "ui8": "uint8", "i16": "int16", "ui16": "uint16", "i32": "int32",
            "ui32": "uint32", "i64": "int64", "ui64": "uint64"}.get(dtype, dtype)


@converts(*_BINARY, "Sum", defaults_only=_BROADCAST)
def _binary(im, node):
    operands, narrow = _widened(im, im.operands(node))
    name = _BINARY.get(node.op_type, "add")
    dtype = narrow or _type_of(operands[0]).dtype
    result = operands[0]
    for operand in operands[1:]:
        if name == "div" and dtype in _INTEGERS:
            result = _integer_division(im, result, operand, dtype)
        elif name in ("maximum", "minimum") and narrow == "ui64":
            greater = im.op("compare", _ordered(im, result, narrow), _ordered(im, operand, narrow),
                            predicate="gt")
            result = im.op("select", greater, *((result, operand) if name == "maximum"
                                                 else (operand, result)))
        else:
            result = im.op(name, result, operand)
    return _narrowed(im, result, narrow)


_INTEGERS = ("i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64")


@converts(*_COMPARE, defaults_only=_BROADCAST)
def _compare(im, node):
    (lhs, rhs), narrow = _widened(im, im.operands(node))
    return im.op("compare", _ordered(im, lhs, narrow), _ordered(im, rhs, narrow),
                 predicate=_COMPARE[node.op_type])


@converts("Where")
def _where(im, node):
    condition = im.tensor(node.input(0), "i1")
    names = [node.input(1), node.input(2)]
    dtype = next((im.dtype(n) for n in names if not im.is_static(n)), None)
    branches, narrow = _widened(im, [im.tensor(n, dtype) for n in names])
    return _narrowed(im, im.op("select", condition, *branches), narrow)


@converts("Pow", defaults_only=_BROADCAST)
def _pow(im, node):
    x = im.tensor(node.input(0))
    if im.is_static(node.input(1)) or node.input(1) in im.parameter_arrays:
        exponent = im.static(node.input(1))
        if exponent.size == 1:
            value = float(exponent.reshape(-1)[0])
            # pow lowers to powf, which is NaN for a negative base: squares
            # and square roots (the common cases) get their own ops.
            if value == 1.0:
                return x
            if value == 2.0:
                return im.op("mul", x, x)
            if value == 0.5:
                return im.op("sqrt", x)
        return im.op("pow", x, im.constant(exponent, _type_of(x).dtype))
    exponent = im.tensor(node.input(1))
    if _type_of(x).dtype in ELEMENTWISE_FLOATS and _type_of(exponent).dtype in _INTEGERS:
        return _integer_power(im, x, exponent)
    return im.op("pow", x, exponent)


def _integer_power(im, x, exponent) -> ir.Value:
    """x^n for a float x and integers n computed at run time: |x|^n,
    negated where x < 0 and n is odd (pow is NaN for a negative base)."""
    n = im.op("cast", exponent, result_type=_type_of(exponent).with_dtype(_type_of(x).dtype))
    magnitude = im.op("pow", im.op("abs", x), n)
    wide = _WIDENED.get(_type_of(exponent).dtype, _type_of(exponent).dtype)
    whole = im.op("cast", exponent, result_type=_type_of(exponent).with_dtype(wide))
    halved = im.op("cast", im.op("mul", n, im.scalar(0.5, n)),
                   result_type=_type_of(whole))  # toward zero
    odd = im.op("compare", im.op("add", halved, halved), whole, predicate="ne")
    negative = im.op("compare", x, im.scalar(0.0, x), predicate="lt")
    flip = im.op("select", im.op("select", odd, negative, im.scalar(False, odd)),
                 im.scalar(-1.0, x), im.scalar(1.0, x))
    return im.op("mul", magnitude, flip)


# `saturate` and `round_mode` apply to float8 targets only, which nn has not.
_CAST = {"Cast": ("to", "saturate", "round_mode"), "CastLike": ("saturate", "round_mode")}


@converts("Cast", "CastLike", attributes=_CAST)
def _cast(im, node):
    if node.op_type == "CastLike" and im.is_static(node.input(0)) \
            and im.dtype(node.input(1)) in _NN_TYPES:
        # A constant cast like a runtime tensor is a constant.
        return im.static(node.input(0)).astype(numpy_dtype(im.dtype(node.input(1))))
    x = im.tensor(node.input(0))
    if node.op_type == "Cast":
        to, target = node.attr("to"), _nn_dtype(node.attr("to"))
    else:
        to, target = None, im.dtype(node.input(1))
    if target is None:
        name = _onnx_dtype_name(to) if to is not None else "that type"
        raise _NodeProblem(f"a cast of a runtime tensor to {name} is not supported (nn tensors "
                           f"are {_NN_TYPE_NAMES})")
    if _type_of(x).dtype == target:
        return x
    return im.op("cast", x, result_type=_type_of(x).with_dtype(target))


# -- quantisation ---------------------------------------------------------------


def _quantization_parameters(im, node, x_shape, quantized: str | None, scale_what: str):
    """The scale (f32) and zero point (of the quantised type: the zero
    point's, else `quantized`, else uint8) of a QuantizeLinear or
    DequantizeLinear node, rank 0 per tensor or rank 1 per axis, and the
    axis."""
    scale = im.tensor(node.input(1))
    scale_type = _type_of(scale)
    if scale_type.dtype != "f32":
        raise _NodeProblem(f"{scale_what} of element type {scale_type.dtype} is not supported "
                           "(only float)")
    if node.input(2) is not None:
        dtype = _quantized_dtype(im, node.input(2))
        if dtype not in _QUANTIZED:
            raise _NodeProblem(f"quantisation to {_onnx_name(dtype)} is not supported (only "
                               "int8 and uint8)")
        zero_point = im.tensor(node.input(2))
        if quantized is not None and dtype != quantized:
            raise _NodeProblem(f"zero point of element type {dtype} differs from the "
                               f"quantised type {quantized}")
    else:
        dtype = quantized or "ui8"
        if dtype in _QUANTIZED:
            zero_point = im.constant(np.zeros(scale_type.shape), dtype)
    if dtype not in _QUANTIZED:
        raise _NodeProblem(f"quantisation to {_onnx_name(dtype)} is not supported (only int8 "
                           "and uint8)")
    if scale_type.rank > 1:
        raise _NodeProblem("scale must be a scalar or 1-D (blocked quantisation is not "
                           "supported)")
    axis = node.attr("axis", 1) if im.opset >= 13 else 1
    if scale_type.rank == 1 and scale_type.shape[0] == 1 and (
            not x_shape or x_shape[_axis(axis, len(x_shape))] != 1):
        # One value in a 1-D tensor: per tensor.
        scale, zero_point = im.reshape(scale, ()), im.reshape(zero_point, ())
    if _type_of(zero_point).shape != _type_of(scale).shape:
        raise _NodeProblem(f"scale {_type_of(scale)} and zero point {_type_of(zero_point)} "
                           "differ in shape")
    return scale, zero_point, axis


_QUANTIZED = ("i8", "ui8")


def _quantized_dtype(im, name: str) -> str:
    """The nn element type of a tensor, or for an array of a type nn does
    not have, its NumPy name (for the message)."""
    value = im.values.get(name, im.parameter_arrays.get(name))
    if isinstance(value, np.ndarray):
        return _nn_dtype_of_array(value) or str(value.dtype)
    return _type_of(value).dtype


def _output_dtype(im, node) -> str | None:
    """The nn type an `output_dtype` attribute names (None: not given)."""
    if im.opset < 21 or not node.attr("output_dtype", 0):
        return None
    elem_type = node.attr("output_dtype", 0)
    dtype = _nn_dtype(elem_type)
    if dtype is None:
        raise _NodeProblem(f"output_dtype {_onnx_dtype_name(elem_type)} is not supported")
    return dtype


@converts("QuantizeLinear", attributes=("axis", "saturate", "output_dtype"),
          defaults_only=("block_size", "precision"))
def _quantize_linear(im, node):
    # `saturate` concerns float8 outputs only; int8 and uint8 always saturate.
    x = im.tensor(node.input(0))
    if _type_of(x).dtype != "f32":
        raise _NodeProblem(f"input of element type {_type_of(x).dtype} is not supported "
                           "(only float)")
    scale, zero_point, axis = _quantization_parameters(
        im, node, _type_of(x).shape, _output_dtype(im, node), "y_scale")
    return im.op("quantize", x, scale, zero_point, axis=axis)


@converts("DequantizeLinear", attributes=("axis", "output_dtype"), defaults_only=("block_size",))
def _dequantize_linear(im, node):
    dtype = _quantized_dtype(im, node.input(0))
    if dtype == "i32":
        return _dequantize_int32(im, node)
    if dtype not in _QUANTIZED:
        raise _NodeProblem(f"dequantisation of {_onnx_name(dtype)} is not supported (only int8 and uint8)")
    x = im.tensor(node.input(0))
    output = _output_dtype(im, node)
    if output not in (None, "f32"):
        raise _NodeProblem(f"output_dtype {output} is not supported (only float)")
    scale, zero_point, axis = _quantization_parameters(im, node, _type_of(x).shape, dtype,
                                                       "x_scale")
    return im.op("dequantize", x, scale, zero_point, axis=axis)


def _dequantize_int32(im, node):
    """An int32 tensor (a quantised bias, as quantisers write one with the
    scale x_scale * w_scale) dequantised per tensor or, 1-D, per element:
    `(f32(x) - zero_point) * scale`."""
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    scale = im.tensor(node.input(1))
    if _type_of(scale).dtype != "f32":
        raise _NodeProblem(f"x_scale of element type {_type_of(scale).dtype} is not supported "
                           "(only float)")
    if _type_of(scale).shape not in ((), (1,)) and (len(shape) != 1
                                                    or _type_of(scale).shape != shape):
        raise _NodeProblem("an int32 tensor is dequantised per tensor or, 1-D, per element "
                           "only")
    real = im.op("cast", x, result_type=_type_of(x).with_dtype("f32"))
    zero = im.static(node.input(2), "x_zero_point") if node.input(2) else None
    if zero is not None and zero.any():
        real = im.op("sub", real, im.constant(zero.astype(np.float32), "f32"))
    return im.op("mul", real, im.reshape(scale, ()) if _type_of(scale).shape == (1,) and
                 shape != (1,) else scale)


# -- contractions and windows -------------------------------------------------


def _as_matrices(im, a, b):
    """`a` and `b` with a 1-D operand made a matrix, as numpy.matmul does
    (a row for `a`, a column for `b`), and a function giving the product
    of the matrices the shape of the product of `a` and `b`."""
    a_vector, b_vector = _type_of(a).rank == 1, _type_of(b).rank == 1
    if a_vector:
        a = im.reshape(a, (1,) + _type_of(a).shape)
    if b_vector:
        b = im.reshape(b, _type_of(b).shape + (1,))

    def product(y):
        shape = _type_of(y).shape
        if a_vector:
            shape = shape[:-2] + shape[-1:]
        if b_vector:
            shape = shape[:-1]
        return im.reshape(y, shape)
    return a, b, product


@converts("MatMul")
def _matmul(im, node):
    a, b, product = _as_matrices(im, *im.operands(node))
    return product(im.op("matmul", a, b))


def _transposed(im, x):
    return im.op("transpose", x, perm=(1, 0))


@converts("Gemm", attributes=("transA", "transB", "alpha", "beta"),
          defaults_only=("broadcast",))
def _gemm(im, node):
    a = im.tensor(node.input(0))
    dtype = _type_of(a).dtype
    if node.attr("transA"):
        a = _transposed(im, a)
    if node.attr("transB") and im.is_static(node.input(1)):
        # A weight known here is transposed here (params="constants").
        b = im.constant(im.static(node.input(1)).T, dtype)
    else:
        b = im.tensor(node.input(1), dtype)
        if node.attr("transB"):
            b = _transposed(im, b)
    y = im.op("matmul", a, b)
    alpha, beta = node.attr("alpha"), node.attr("beta")
    if alpha != 1.0:
        y = im.op("mul", y, im.scalar(alpha, y))
    if node.input(2) and beta != 0.0:
        c = im.tensor(node.input(2), dtype)
        if beta != 1.0:
            c = im.op("mul", c, im.scalar(beta, c))
        y = im.op("add", y, c)
    return y


def _window(im, node, spatial: tuple[int, ...], kernel: tuple[int, ...],
            dilations: tuple[int, ...]):
    """The strides and the padding (top, left, bottom, right) of a 2-D
    windowed op, from `strides`, `pads` and `auto_pad`."""
    strides = tuple(node.attr("strides", [1] * len(spatial)))
    auto_pad = node.attr("auto_pad").decode()
    if auto_pad in ("NOTSET", "VALID"):
        pads = tuple(node.attr("pads", [0] * 2 * len(spatial))) if auto_pad == "NOTSET" \
            else (0,) * 2 * len(spatial)
        begin, end = pads[:len(spatial)], pads[len(spatial):]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else large)
            end.append(large if auto_pad == "SAME_UPPER" else small)
    else:
        raise _NodeProblem(f"auto_pad '{auto_pad}' is not supported")
    return strides, tuple(begin) + tuple(end)


def _as_2d(x_shape) -> bool:
    if len(x_shape) == 3:
        return True
    if len(x_shape) != 4:
        raise _NodeProblem(f"only 1-D and 2-D windows (inputs of rank 3 or 4) are supported, "
                           f"got rank {len(x_shape)}")
    return False


def _pairs(values, one_d: bool, fill: int):
    """1-D window parameters as 2-D ones over a height of 1."""
    return (fill,) + tuple(values) if one_d else tuple(values)


def _pads_2d(pads, one_d: bool):
    return (0, pads[0], 0, pads[1]) if one_d else tuple(pads)


_WINDOW = ("kernel_shape", "strides", "pads", "auto_pad", "dilations")


@converts("Conv", attributes=_WINDOW + ("group",))
def _conv(im, node):
    x, weight = im.tensor(node.input(0)), im.tensor(node.input(1))
    bias = im.tensor(node.input(2)) if node.input(2) else None
    x_shape, w_shape = _type_of(x).shape, _type_of(weight).shape
    one_d = _as_2d(x_shape)
    kernel = tuple(node.attr("kernel_shape", w_shape[2:]))
    dilations = tuple(node.attr("dilations", [1] * len(kernel)))
    strides, pads = _window(im, node, x_shape[2:], kernel, dilations)
    if one_d:
        x = im.reshape(x, x_shape[:2] + (1,) + x_shape[2:])
        weight = im.reshape(weight, w_shape[:2] + (1,) + w_shape[2:])
    y = im.op("conv2d", x, weight, bias, strides=_pairs(strides, one_d, 1),
              padding=_pads_2d(pads, one_d), dilations=_pairs(dilations, one_d, 1),
              groups=node.attr("group"))
    if one_d:
        shape = _type_of(y).shape
        y = im.reshape(y, shape[:2] + shape[3:])
    return y


# -- integer products (lamina.quantized_products) ------------------------------


def _quantized_operand(im, node, index: int, what: str, *, weight: bool = False):
    """Input `index` of an integer product as an i8 or ui8 value (a ui8
    weight, whose products nn takes as i8, moved to i8: its zero point
    moves with it, in `_zero_of`)."""
    name = node.input(index)
    dtype = _quantized_dtype(im, name)
    if dtype not in _QUANTIZED:
        raise _NodeProblem(f"{what} '{name}' has element type {dtype}; {node.op_type} is "
                           "imported for int8 and uint8 operands")
    if weight and dtype == "ui8" and im.is_static(name):
        shifted = im.static(name).astype(np.int16) - quantized_products.UNSIGNED_OFFSET
        return im.constant(shifted.astype(np.int8), "i8"), dtype
    value = im.tensor(name)
    if weight and dtype == "ui8":
        value, _ = quantized_products.moved_to_signed(value, np.zeros((), np.int32))
    return value, dtype


def _zero_of(im, node, index: int, dtype: str, what: str, size: int, per: str,
             weight: bool = False):
    """Zero point `index` of an integer product as i32 (0 where absent; a
    moved ui8 weight's less 128): a scalar, or one value per `per` (`size`
    of them, 1-D, or `[size, 1]` for rows); an array where it is known
    here, else an i32 tensor."""
    name = node.input(index)
    if not name:
        offset = quantized_products.UNSIGNED_OFFSET if weight and dtype == "ui8" else 0
        return np.asarray(-offset, np.int32)
    if _quantized_dtype(im, name) != dtype:
        raise _NodeProblem(f"{what} '{name}' has element type {_quantized_dtype(im, name)}; "
                           f"the operand is {dtype}")
    shape = im.shape(name) if name in im.values else im.parameter_arrays[name].shape
    count = int(np.prod(shape))
    if count == 1:
        target = ()
    elif len(shape) == 1 and shape[0] == size:
        target = (size, 1) if per == "row" else (size,)
    else:
        raise _NodeProblem(f"{what} '{name}' has shape {list(shape)}; it must be a scalar "
                           f"or have one value per {per} ({size})")
    offset = quantized_products.UNSIGNED_OFFSET if weight and dtype == "ui8" else 0
    if not isinstance(im.values.get(name), ir.Value):
        return np.asarray(im.static(name, what).astype(np.int32).reshape(target) - offset)
    # Computed at run time: widened exactly through f32.
    zero = im.reshape(im.tensor(name), target)
    real = im.op("dequantize", zero, im.constant(np.array(1.0, np.float32), "f32"),
                 im.constant(np.array(offset, np.uint8 if dtype == "ui8" else np.int8), dtype))
    return im.op("cast", real, result_type=_type_of(real).with_dtype("i32"))


def _scale_of(im, node, index: int, what: str, size: int, per: str) -> ir.Value:
    """Scale `index` of a QLinear node as f32 (a float16 one widened,
    exactly): a scalar, or one per `per`."""
    name = node.input(index)
    scale = im.tensor(name)
    scale_type = _type_of(scale)
    if scale_type.dtype == "f16":
        scale = im.op("cast", scale, result_type=scale_type.with_dtype("f32"))
        scale_type = _type_of(scale)
    if scale_type.dtype != "f32":
        raise _NodeProblem(f"{what} '{name}' has element type {scale_type.dtype}; only float "
                           "and float16 scales are supported")
    if scale_type.shape in ((), (1,)):
        return im.reshape(scale, ())
    if scale_type.shape != (size,):
        raise _NodeProblem(f"{what} '{name}' has shape {list(scale_type.shape)}; it must be a "
                           f"scalar or have one value per {per} ({size})")
    return scale


def _integer_matmul(im, node, inputs=(0, 1, 2, 3)):
    """(A - a_zero_point) x (B - b_zero_point) in i32 and the function
    reshaping a product of matrices as numpy.matmul's; inputs are the
    indices of A, B and their zero points."""
    a_index, b_index, za_index, zb_index = inputs
    a, a_dtype = _quantized_operand(im, node, a_index, "input")
    b, b_dtype = _quantized_operand(im, node, b_index, "input", weight=True)
    a, b, product = _as_matrices(im, a, b)
    rows, columns = _type_of(a).shape[-2], _type_of(b).shape[-1]
    za = _zero_of(im, node, za_index, a_dtype, "a_zero_point", rows, "row")
    zb = _zero_of(im, node, zb_index, b_dtype, "b_zero_point", columns, "column", weight=True)
    try:
        return quantized_products.integer_matmul(a, b, za, zb), product
    except VerifyError as error:
        raise _NodeProblem(f"'nn.matmul' op {error}") from None


@converts("MatMulInteger")
def _matmul_integer(im, node):
    """(A - a_zero_point) x (B - b_zero_point) in i32: nn.matmul of the
    quantised operands (int8 or uint8 A; a uint8 B moved to int8) and the
    zero points' terms (lamina.quantized_products)."""
    accumulator, product = _integer_matmul(im, node)
    return product(accumulator)


@converts("QLinearMatMul")
def _qlinear_matmul(im, node):
    """MatMulInteger's product requantised: saturate(round_half_to_even(
    f32(acc) * (a_scale * b_scale / y_scale)) + y_zero_point), the
    multiplier computed in f32 as ONNX Runtime computes it."""
    accumulator, product = _integer_matmul(im, node, inputs=(0, 3, 2, 5))
    columns = _type_of(accumulator).shape[-1]
    a_scale = _scale_of(im, node, 1, "a_scale", 1, "tensor")
    b_scale = _scale_of(im, node, 4, "b_scale", columns, "column")
    y_scale = _scale_of(im, node, 6, "y_scale", 1, "tensor")
    y_zero = _requantisation_zero(im, node, 7)
    multiplier = nn.DivOp.build(nn.MulOp.build(a_scale, b_scale), y_scale)
    return product(quantized_products.requantized(accumulator, multiplier, y_zero))


def _requantisation_zero(im, node, index: int) -> ir.Value:
    """y_zero_point (per tensor) as the quantised result's type; uint8 0
    where absent."""
    name = node.input(index)
    if not name:
        return im.constant(np.zeros((), np.uint8), "ui8")
    dtype = _quantized_dtype(im, name)
    if dtype not in _QUANTIZED:
        raise _NodeProblem(f"y_zero_point of element type {dtype} is not supported (only "
                           "int8 and uint8)")
    zero = im.tensor(name)
    if _type_of(zero).shape not in ((), (1,)):
        raise _NodeProblem("y_zero_point must be a scalar (per tensor)")
    return im.reshape(zero, ())


def _integer_conv(im, node, inputs=(0, 1, 2, 3)):
    """ConvInteger's i32 convolution of (x - x_zero_point) and (w -
    w_zero_point), the padding holding x_zero_point, and a function giving
    a 1-D convolution's result back its rank."""
    x_index, w_index, zx_index, zw_index = inputs
    x, x_dtype = _quantized_operand(im, node, x_index, "input")
    weight, w_dtype = _quantized_operand(im, node, w_index, "weight", weight=True)
    x_shape, w_shape = _type_of(x).shape, _type_of(weight).shape
    one_d = _as_2d(x_shape)
    kernel = tuple(node.attr("kernel_shape", w_shape[2:]))
    dilations = tuple(node.attr("dilations", [1] * len(kernel)))
    strides, pads = _window(im, node, x_shape[2:], kernel, dilations)
    zx = _zero_of(im, node, zx_index, x_dtype, "x_zero_point", 1, "tensor")
    zw = _zero_of(im, node, zw_index, w_dtype, "w_zero_point", w_shape[0], "output channel",
                  weight=True)
    if one_d:
        x = im.reshape(x, x_shape[:2] + (1,) + x_shape[2:])
        weight = im.reshape(weight, w_shape[:2] + (1,) + w_shape[2:])
    window = quantized_products.Window(
        strides=_pairs(strides, one_d, 1), padding=_pads_2d(pads, one_d),
        dilations=_pairs(dilations, one_d, 1), groups=node.attr("group"))

    def restored(y):
        if not one_d:
            return y
        shape = _type_of(y).shape
        return im.reshape(y, shape[:2] + shape[3:])
    try:
        return quantized_products.integer_conv2d(x, weight, zx, zw, window), restored
    except VerifyError as error:
        raise _NodeProblem(f"'nn.conv2d' op {error}") from None


@converts("ConvInteger", attributes=_WINDOW + ("group",))
def _conv_integer(im, node):
    """conv(x - x_zero_point, w - w_zero_point) in i32: nn.conv2d of the
    quantised operands (int8 or uint8 x; a uint8 w moved to int8) and the
    zero points' terms, the padding holding x's zero point
    (lamina.quantized_products)."""
    accumulator, restored = _integer_conv(im, node)
    return restored(accumulator)


@converts("QLinearConv", attributes=_WINDOW + ("group",))
def _qlinear_conv(im, node):
    """ConvInteger's accumulator plus the i32 bias, requantised:
    saturate(round_half_to_even(f32(acc) * (x_scale * w_scale[o] /
    y_scale)) + y_zero_point), as ONNX Runtime's QLinearConv computes it."""
    accumulator, restored = _integer_conv(im, node, inputs=(0, 3, 2, 5))
    out_channels = _type_of(im.tensor(node.input(3))).shape[0]
    x_scale = _scale_of(im, node, 1, "x_scale", 1, "tensor")
    w_scale = _scale_of(im, node, 4, "w_scale", out_channels, "output channel")
    y_scale = _scale_of(im, node, 6, "y_scale", 1, "tensor")
    y_zero = _requantisation_zero(im, node, 7)
    if node.input(8):
        bias = im.tensor(node.input(8))
        if _type_of(bias).dtype != "i32" or _type_of(bias).shape != (out_channels,):
            raise _NodeProblem(f"bias must be int32 with one value per output channel "
                               f"({out_channels}), got {_type_of(bias)}")
        if _type_of(accumulator).rank == 3:     # a 1-D convolution's, before its restoring
            bias = im.reshape(bias, (out_channels, 1))
        accumulator = nn.AddOp.build(accumulator, quantized_products.per_channel(bias, "NCHW"))
    multiplier = nn.DivOp.build(nn.MulOp.build(x_scale, w_scale), y_scale)
    return restored(quantized_products.requantized(
        accumulator, quantized_products.per_channel(multiplier, "NCHW"), y_zero))


def _pool_window(im, node, x_shape):
    """A pooling node's window on an input of `x_shape`: whether it is
    1-D, its kernel, strides and pads (begins, then ends); dilations are
    a problem at the node."""
    one_d = _as_2d(x_shape)
    kernel = tuple(node.attr("kernel_shape"))
    dilations = tuple(node.attr("dilations", [1] * len(kernel)))
    if any(d != 1 for d in dilations):
        raise _NodeProblem(f"pooling with dilations {list(dilations)} is not supported")
    strides, pads = _window(im, node, x_shape[2:], kernel, dilations)
    return one_d, kernel, strides, pads


def _pool_output(size, k, s, begin, end, ceil):
    out = (size + begin + end - k) // s + 1
    if ceil:
        out = -(-(size + begin + end - k) // s) + 1
        if (out - 1) * s >= size + begin:
            out -= 1
    return out


# `storage_order` is the layout of MaxPool's indices, an output nn has not.
@converts("MaxPool", "AveragePool",
          attributes={"MaxPool": _WINDOW + ("ceil_mode",),
                      "AveragePool": _WINDOW + ("ceil_mode", "count_include_pad")},
          defaults_only={"MaxPool": ("storage_order",)})
def _pool(im, node):
    x = im.tensor(node.input(0))
    x_shape = _type_of(x).shape
    one_d, kernel, strides, pads = _pool_window(im, node, x_shape)
    rank = len(kernel)
    begin, end = list(pads[:rank]), list(pads[rank:])
    if node.attr("ceil_mode"):
        for i, (size, k, s) in enumerate(zip(x_shape[2:], kernel, strides)):
            wanted = _pool_output(size, k, s, begin[i], end[i], True)
            if wanted != _pool_output(size, k, s, begin[i], end[i], False):
                if node.op_type == "AveragePool":
                    raise _NodeProblem("average pooling in ceil mode with a partial last "
                                       "window is not supported")
                # The padding of a max pool never wins: pad the last window.
                end[i] = (wanted - 1) * s + k - size - begin[i]
    count_include_pad = node.op_type == "AveragePool" and node.attr("count_include_pad")
    if one_d:
        x = im.reshape(x, x_shape[:2] + (1,) + x_shape[2:])
    name = "max_pool2d" if node.op_type == "MaxPool" else "avg_pool2d"
    padding = _pads_2d(tuple(begin) + tuple(end), one_d)
    y = im.op(name, x, kernel=_pairs(kernel, one_d, 1), strides=_pairs(strides, one_d, 1),
              padding=padding)
    if name == "avg_pool2d" and not count_include_pad and any(padding):
        # nn.avg_pool2d divides by the whole window; ONNX by the elements
        # of the input in it.
        height, width = _type_of(x).shape[2:]
        counts = _window_counts((height, width), _pairs(kernel, one_d, 1),
                                _pairs(strides, one_d, 1), padding)
        y = im.op("mul", y, im.constant(np.prod(_pairs(kernel, one_d, 1)) / counts,
                                         _type_of(y).dtype))
    if one_d:
        shape = _type_of(y).shape
        y = im.reshape(y, shape[:2] + shape[3:])
    return y


def _window_counts(size, kernel, strides, padding) -> np.ndarray:
    """How many elements of the unpadded input each window holds."""
    top, left, bottom, right = padding
    inside = np.pad(np.ones(size), ((top, bottom), (left, right)))
    out_h = (inside.shape[0] - kernel[0]) // strides[0] + 1
    out_w = (inside.shape[1] - kernel[1]) // strides[1] + 1
    counts = np.zeros((out_h, out_w))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            counts += inside[i:i + strides[0] * (out_h - 1) + 1:strides[0],
                             j:j + strides[1] * (out_w - 1) + 1:strides[1]]
    return counts


@converts("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(im, node):
    x = im.tensor(node.input(0))
    axes = tuple(range(2, _type_of(x).rank))
    name = "reduce_mean" if node.op_type == "GlobalAveragePool" else "reduce_max"
    return im.op(name, x, axes=axes, keepdims=True)


# -- normalisations and softmax -----------------------------------------------


# `momentum` updates running statistics, in training only; before opset 7,
# `is_test` = 0 (the default) asks for training, and `spatial` = 0 for
# statistics per element rather than per channel.
@converts("BatchNormalization", attributes=("epsilon", "momentum", "training_mode", "is_test"),
          defaults_only=("spatial",))
def _batch_norm(im, node):
    if node.attr("training_mode") or (im.opset < 7 and not node.attr("is_test")):
        raise _NodeProblem("batch normalization in training mode is not supported")
    x, scale, shift, mean, var = [im.tensor(node.input(i)) for i in range(5)]
    x_type = _type_of(x)
    if x_type.rank < 2:
        raise _NodeProblem(f"batch normalization needs an input of rank >= 2, got {x_type}")
    inv_std = im.op("rsqrt", im.op("add", var, im.scalar(node.attr("epsilon"), var)))
    factor = im.op("mul", scale, inv_std)
    offset = im.op("sub", shift, im.op("mul", mean, factor))
    channel_shape = (x_type.shape[1],) + (1,) * (x_type.rank - 2)
    y = im.op("mul", x, im.reshape(factor, channel_shape))
    return im.op("add", y, im.reshape(offset, channel_shape))


# `stash_type` = 1 computes the statistics in f32, as nn.layer_norm does.
@converts("LayerNormalization", attributes=("axis", "epsilon"), defaults_only=("stash_type",))
def _layer_norm(im, node):
    x = im.tensor(node.input(0))
    x_type = _type_of(x)
    axis = _axis(node.attr("axis"), x_type.rank)
    normalized = x_type.shape[axis:]
    params = []
    for i in (1, 2):
        if node.input(i) is None:
            params.append(im.constant(np.zeros(normalized), x_type.dtype))
            continue
        param = im.tensor(node.input(i), x_type.dtype)
        if _type_of(param).shape != normalized:
            param = im.op("broadcast_to", param, result_type=x_type.with_shape(normalized))
        params.append(param)
    y = im.op("layer_norm", x, *params, axis=axis, epsilon=node.attr("epsilon"))
    if not any(name in im.used for name in node.proto.output[1:]):
        return y
    # The optional Mean and InvStdDev outputs, of the stash type (float).
    if x_type.dtype != "f32":
        raise _NodeProblem("the Mean and InvStdDev outputs of a LayerNormalization of "
                           f"element type {x_type.dtype} are not supported (only float)")
    axes = tuple(range(axis, x_type.rank))
    mean = im.op("reduce_mean", x, axes=axes, keepdims=True)
    centred = im.op("sub", x, im.op("broadcast_to", mean, result_type=x_type))
    variance = im.op("reduce_mean", im.op("mul", centred, centred), axes=axes, keepdims=True)
    inverse = im.op("rsqrt", im.op("add", variance, im.scalar(node.attr("epsilon"), variance)))
    return [y, mean, inverse]


@converts("Softmax", "LogSoftmax", attributes=("axis",))
def _softmax(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    name = "softmax" if node.op_type == "Softmax" else "log_softmax"
    axis = _axis(node.attr("axis"), len(shape))
    if im.opset >= 13:
        return im.op(name, x, axis=axis)
    # Before opset 13 the input is flattened to 2-D at `axis` first.
    flat = im.reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))
    return im.reshape(im.op(name, flat, axis=1), shape)


# `qk_matmul_output_mode` selects what the optional output #3 holds, which
# nn has not; `softmax_precision` is taken where it is the inputs' type.
@converts("Attention", attributes=("is_causal", "scale", "q_num_heads", "kv_num_heads",
                                   "left_window_size", "right_window_size",
                                   "softmax_precision", "softcap", "qk_matmul_output_mode"))
def _attention(im, node):
    """nn.attention of the heads, after the key/value cache (the past keys
    and values before the new ones, which are the present outputs): a
    causal mask and a window aligned to the last query (after the past, or
    at each batch's valid length), keys past the valid lengths (given at
    run time) hidden, a mask shorter than the keys padded with -inf, and
    each key/value head repeated for its group of query heads."""
    past_key, past_value, lengths = node.input(4), node.input(5), node.input(6)
    if (past_key is None) != (past_value is None):
        raise _NodeProblem("past_key and past_value must be given together")
    if lengths and past_key:
        raise _NodeProblem("nonpad_kv_seqlen with past_key and past_value is not supported")
    q, k, v = (im.tensor(node.input(i)) for i in range(3))
    precision = node.attr("softmax_precision")
    if precision is not None and _nn_dtype(precision) != _type_of(q).dtype:
        raise _NodeProblem(f"attribute 'softmax_precision' = {_onnx_dtype_name(precision)} "
                           f"is not supported (only the inputs' type, {_type_of(q).dtype})")
    rank = _type_of(q).rank
    if rank == 3:
        # [batch, sequence, heads * head_size] -> [batch, heads, sequence, head_size]
        q, k, v = (_split_heads(im, t, node.attr(heads)) for t, heads in (
            (q, "q_num_heads"), (k, "kv_num_heads"), (v, "kv_num_heads")))
    elif rank != 4:
        raise _NodeProblem(f"attention inputs must have rank 3 or 4, got rank {rank}")
    offset = 0
    if past_key:
        offset = im.shape(past_key)[2]
        k = im.op("concat", [im.tensor(past_key, _type_of(k).dtype), k], axis=2)
        v = im.op("concat", [im.tensor(past_value, _type_of(v).dtype), v], axis=2)
    present_key, present_value = k, v
    batch, q_heads, queries, _ = _type_of(q).shape
    kv_heads, keys = _type_of(k).shape[1], _type_of(k).shape[2]
    if q_heads != kv_heads:
        if q_heads % kv_heads:
            raise _NodeProblem(f"{q_heads} query heads are no multiple of {kv_heads} key/value "
                               "heads")
        k, v = (_repeat_heads(im, t, q_heads // kv_heads) for t in (k, v))
    mask = None
    if node.input(3):
        static = im.is_static(node.input(3)) and im.static(node.input(3)).dtype == np.bool_
        mask = im.tensor(node.input(3), None if static else _type_of(q).dtype)
        if _type_of(mask).dtype == "i1":
            # A boolean mask says which keys take part: the others get -inf.
            mask = im.op("select", mask, im.scalar(0.0, q), im.scalar(float("-inf"), q))
        short = keys - _type_of(mask).shape[-1]
        if short > 0:
            mask = im.op("pad", mask, low=[0] * _type_of(mask).rank,
                         high=[0] * (_type_of(mask).rank - 1) + [short], value=float("-inf"))
    add = lambda bias: bias if mask is None else im.op("add", mask, bias)
    causal = bool(node.attr("is_causal"))
    softcap = node.attr("softcap") or 0.0
    scores_wanted = len(node.proto.output) > 3 and node.proto.output[3] in im.used
    # Softcapped scores, or the scores as an output: the attention composed.
    composed = bool(softcap) or scores_wanted
    if lengths:
        valid = im.op("cast", im.reshape(im.tensor(node.input(6)), (batch, 1, 1, 1)),
                      result_type=TensorType((batch, 1, 1, 1), "i64"))
        key_index = im.constant(np.arange(keys).reshape(1, 1, 1, keys), "i64")
        hidden = im.op("compare", key_index, valid, predicate="ge")
        if causal:
            # Key j is seen by query i where j - i <= valid - queries.
            ahead = im.constant((np.arange(keys)[None, :] - np.arange(queries)[:, None])
                                .reshape(1, 1, queries, keys), "i64")
            late = im.op("compare", ahead, im.op("sub", valid, im.scalar(queries, valid)),
                         predicate="gt")
            hidden = im.op("select", late, im.scalar(True, late), hidden)
            causal = False
        mask = add(im.op("select", hidden, im.scalar(float("-inf"), q), im.scalar(0.0, q)))
        if _window_sizes(node) != (-1, -1):
            raise _NodeProblem("a sliding window with nonpad_kv_seqlen is not supported")
    elif causal and (offset or composed):
        mask = add(im.constant(_sliding_window_bias(queries, keys, offset, -1, 0),
                               _type_of(q).dtype))
        causal = False
    window = _sliding_window(node, queries, keys, offset)
    if window is not None:
        mask = add(im.constant(window, _type_of(q).dtype))
    if composed:
        y, scores = _composed_attention(im, node, q, k, v, mask, softcap)
    else:
        y, scores = im.op("attention", q, k, v, mask, causal=causal,
                          scale=node.attr("scale")), None
    if rank == 3:
        batch, heads, sequence, size = _type_of(y).shape
        y = im.reshape(im.op("transpose", y, perm=(0, 2, 1, 3)), (batch, sequence, heads * size))
    return [y, present_key, present_value, scores]


def _composed_attention(im, node, q, k, v, bias, softcap: float):
    """softmax(softcap tanh(q k^T scale / softcap) + bias) v, a row of
    only hidden keys giving 0; and the scores of `qk_matmul_output_mode`:
    0 and 1 the scaled products (softcapped where softcapped, as ONNX's
    reference gives them in mode 0 too), 2 those plus the bias, 3 the
    probabilities."""
    head = _type_of(q).shape[-1]
    scale = node.attr("scale") or 1.0 / math.sqrt(head)
    products = im.op("matmul", q, im.op("transpose", k, perm=(0, 1, 3, 2)))
    products = im.op("mul", products, im.scalar(scale, products))
    if softcap:
        products = im.op("mul", im.op("tanh", im.op("div", products, im.scalar(
            softcap, products))), im.scalar(softcap, products))
    biased = products if bias is None else im.op("add", products, bias)
    probabilities = im.op("softmax", biased, axis=-1)
    if bias is not None:
        hidden_row = im.op("compare", im.op("reduce_max", bias, axes=(-1,), keepdims=True),
                           im.scalar(float("-inf"), bias), predicate="eq")
        probabilities = im.op("select", hidden_row, im.scalar(0.0, probabilities),
                              probabilities)
    y = im.op("matmul", probabilities, v)
    mode = node.attr("qk_matmul_output_mode")
    if mode not in (0, 1, 2, 3):
        raise _NodeProblem(f"attribute 'qk_matmul_output_mode' = {mode} is not supported "
                           "(0 to 3)")
    scores = {0: products, 1: products, 2: biased, 3: probabilities}[mode]
    return y, scores


def _repeat_heads(im, x, times: int) -> ir.Value:
    """[b, h, s, d] -> [b, h * times, s, d], each head `times` times in a row."""
    b, h, s, d = _type_of(x).shape
    spread = im.op("broadcast_to", im.reshape(x, (b, h, 1, s, d)),
                   result_type=_type_of(x).with_shape((b, h, times, s, d)))
    return im.reshape(spread, (b, h * times, s, d))


def _window_sizes(node) -> tuple[int, int]:
    # Before opset 24 there are no windows.
    return node.attr("left_window_size", -1), node.attr("right_window_size", -1)


def _sliding_window_bias(queries: int, keys: int, offset: int, left: int,
                         right: int) -> np.ndarray:
    """The additive mask [queries, keys] in which query `i` (at position
    `offset + i`) sees keys `offset + i - left .. offset + i + right`, a
    size of -1 leaving that side open."""
    distance = offset + np.arange(queries)[:, None] - np.arange(keys)[None, :]
    seen = np.ones((queries, keys), np.bool_)
    if left >= 0:
        seen &= distance <= left
    if right >= 0:
        seen &= -distance <= right
    return np.where(seen, 0.0, -np.inf).astype(np.float32)


def _sliding_window(node, queries: int, keys: int, offset: int = 0) -> np.ndarray | None:
    """The additive mask of the node's sliding window, or None where both
    sides are open."""
    left, right = _window_sizes(node)
    for name, size in (("left_window_size", left), ("right_window_size", right)):
        if size < -1:
            raise _NodeProblem(f"attribute '{name}' must be -1 or >= 0, got {size}")
    if left == -1 and right == -1:
        return None
    return _sliding_window_bias(queries, keys, offset, left, right)


def _split_heads(im, x, heads):
    if not heads:
        raise _NodeProblem("attention on rank-3 inputs needs q_num_heads and kv_num_heads")
    batch, sequence, hidden = _type_of(x).shape
    x = im.reshape(x, (batch, sequence, heads, hidden // heads))
    return im.op("transpose", x, perm=(0, 2, 1, 3))


# -- reductions ---------------------------------------------------------------

_REDUCE = {"ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
           "ReduceMin": "reduce_min"}


def _reduce_axes(im, node, rank: int):
    """The normalised reduction axes, or None for an identity (empty axes
    with noop_with_empty_axes)."""
    axes = im.static(node.input(1), "axes") if node.input(1) else node.attr("axes")
    if axes is None or len(axes) == 0:
        if node.attr("noop_with_empty_axes"):
            return None
        return tuple(range(rank))
    return tuple(sorted(_axis(int(a), rank) for a in np.asarray(axes).reshape(-1)))


@converts(*_REDUCE, attributes=("axes", "keepdims", "noop_with_empty_axes"))
def _reduce(im, node):
    x = im.tensor(node.input(0))
    axes = _reduce_axes(im, node, _type_of(x).rank)
    if axes is None:
        return x
    return im.op(_REDUCE[node.op_type], x, axes=axes, keepdims=bool(node.attr("keepdims")))


# -- data movement (folded with NumPy when every input is known) --------------


def _reshape_target(im, node, shape) -> tuple[int, ...]:
    target = [int(d) for d in im.static(node.input(1), "shape")]
    if not node.attr("allowzero"):
        target = [shape[i] if d == 0 else d for i, d in enumerate(target)]
    if target.count(-1) == 1:
        known = math.prod(d for d in target if d != -1)
        target[target.index(-1)] = math.prod(shape) // known if known else 0
    if math.prod(target) != math.prod(shape):
        raise _NodeProblem(f"cannot reshape {list(shape)} to {target}")
    return tuple(target)


def _unsqueezed(im, node, shape) -> tuple[int, ...]:
    axes = im.static(node.input(1), "axes") if node.input(1) else node.attr("axes")
    rank = len(shape) + len(axes)
    axes = sorted(_axis(int(a), rank) for a in np.asarray(axes).reshape(-1))
    result = list(shape)
    for a in axes:
        result.insert(a, 1)
    return tuple(result)


def _squeezed(im, node, shape) -> tuple[int, ...]:
    axes = im.static(node.input(1), "axes") if node.input(1) else node.attr("axes")
    if axes is None:
        return tuple(d for d in shape if d != 1)
    axes = {_axis(int(a), len(shape)) for a in np.asarray(axes).reshape(-1)}
    if any(shape[a] != 1 for a in axes):
        raise _NodeProblem(f"cannot squeeze dims {sorted(axes)} of {list(shape)}: not all 1")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _flattened(node, shape) -> tuple[int, ...]:
    axis = node.attr("axis")
    axis = axis % len(shape) if len(shape) and axis < 0 else axis
    return (math.prod(shape[:axis]), math.prod(shape[axis:]))


_SHAPE_RULES = {
    "Reshape": _reshape_target,
    "Unsqueeze": _unsqueezed,
    "Squeeze": _squeezed,
    "Flatten": lambda im, node, shape: _flattened(node, shape),
}


_SHAPE_ATTRIBUTES = {"Reshape": ("allowzero",), "Unsqueeze": ("axes",), "Squeeze": ("axes",),
                     "Flatten": ("axis",)}


@converts(*_SHAPE_RULES, attributes=_SHAPE_ATTRIBUTES)
def _reshape_like(im, node):
    x = im.tensor(node.input(0))
    return im.reshape(x, _SHAPE_RULES[node.op_type](im, node, _type_of(x).shape))


@folds(*_SHAPE_RULES, attributes=_SHAPE_ATTRIBUTES)
def _fold_reshape_like(im, node):
    x = im.static(node.input(0))
    return x.reshape(_SHAPE_RULES[node.op_type](im, node, x.shape))


def _perm(node, rank):
    return tuple(node.attr("perm", list(reversed(range(rank)))))


@converts("Transpose", attributes=("perm",))
def _transpose(im, node):
    x = im.tensor(node.input(0))
    return im.op("transpose", x, perm=_perm(node, _type_of(x).rank))


@folds("Transpose", attributes=("perm",))
def _fold_transpose(im, node):
    x = im.static(node.input(0))
    return np.transpose(x, _perm(node, x.ndim))


@converts("Concat", attributes=("axis",))
def _concat(im, node):
    operands = im.operands(node)
    return im.op("concat", operands, axis=_axis(node.attr("axis"), _type_of(operands[0]).rank))


@folds("Concat", attributes=("axis",))
def _fold_concat(im, node):
    arrays = [im.static(n) for n in node.proto.input if n]
    return np.concatenate(arrays, axis=node.attr("axis"))


def _slice_arguments(im, node, shape):
    """Per-dim (start, limit, step) of a Slice, clamped like ONNX."""
    if im.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes, steps = node.attr("axes"), None
    else:
        starts, ends = im.static(node.input(1), "starts"), im.static(node.input(2), "ends")
        axes, steps = [im.static(node.input(i), name) if node.input(i) else None
                       for i, name in ((3, "axes"), (4, "steps"))]
    rank = len(shape)
    axes = range(len(starts)) if axes is None else [_axis(int(a), rank) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    bounds = [(0, d, 1) for d in shape]
    for axis, start, end, step in zip(axes, starts, ends, steps):
        bounds[axis] = (int(start), int(end), step)
    return bounds


@converts("Slice", attributes=("starts", "ends", "axes"))
def _slice(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    starts, limits, strides = [], [], []
    for d, (start, end, step) in enumerate(_slice_arguments(im, node, shape)):
        if step < 1:
            raise _NodeProblem(f"slice step {step} in dim {d} is not supported (nn.slice "
                               "takes steps >= 1)")
        start, end, _ = slice(start, end, step).indices(shape[d])
        starts.append(start)
        limits.append(max(end, start))
        strides.append(step)
    if tuple(limits) == shape and not any(starts) and all(s == 1 for s in strides):
        return x
    return im.op("slice", x, starts=starts, limits=limits,
                 strides=None if all(s == 1 for s in strides) else strides)


@folds("Slice", attributes=("starts", "ends", "axes"))
def _fold_slice(im, node):
    x = im.static(node.input(0))
    return x[tuple(slice(*bounds) for bounds in _slice_arguments(im, node, x.shape))]


def _split_sizes(im, node, size: int) -> list[int]:
    outputs = len(node.proto.output)
    split = im.static(node.input(1), "split") if node.input(1) else node.attr("split")
    if split is not None:
        return [int(s) for s in split]
    if node.attr("num_outputs") is not None:
        chunk = -(-size // node.attr("num_outputs"))
        return [min(chunk, size - i * chunk) for i in range(node.attr("num_outputs"))]
    return [size // outputs] * outputs


@converts("Split", attributes=("axis", "split", "num_outputs"))
def _split(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    axis = _axis(node.attr("axis"), len(shape))
    results, start = [], 0
    for size in _split_sizes(im, node, shape[axis]):
        starts = [start if d == axis else 0 for d in range(len(shape))]
        limits = [start + size if d == axis else shape[d] for d in range(len(shape))]
        results.append(im.op("slice", x, starts=starts, limits=limits))
        start += size
    return results


@folds("Split", attributes=("axis", "split", "num_outputs"))
def _fold_split(im, node):
    x = im.static(node.input(0))
    axis = node.attr("axis")
    sizes = _split_sizes(im, node, x.shape[axis])
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@converts("Expand")
def _expand(im, node):
    x = im.tensor(node.input(0))
    x_type = _type_of(x)
    try:
        shape = np.broadcast_shapes(x_type.shape, tuple(int(d) for d in im.static(
            node.input(1), "shape")))
    except ValueError as error:
        raise _NodeProblem(str(error)) from None
    if shape == x_type.shape:
        return x
    return im.op("broadcast_to", x, result_type=x_type.with_shape(shape))


@folds("Expand")
def _fold_expand(im, node):
    x = im.static(node.input(0))
    shape = [int(d) for d in im.static(node.input(1))]
    return x * np.ones(shape, x.dtype)


@converts("Gather", attributes=("axis",))
def _gather(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    axis = _axis(node.attr("axis"), len(shape))
    if not im.is_static(node.input(1)):
        return indexing.take(im, x, [im.tensor(node.input(1))], axis)
    indices = im.static(node.input(1), "indices").astype(np.int64)
    flat = np.where(indices < 0, indices + shape[axis], indices).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= shape[axis]):
        raise _NodeProblem(f"gather indices out of range for dim {axis} of size {shape[axis]}")

    def piece(start, limit, stride):
        starts = [start if d == axis else 0 for d in range(len(shape))]
        limits = [limit if d == axis else shape[d] for d in range(len(shape))]
        strides = [stride if d == axis else 1 for d in range(len(shape))]
        return im.op("slice", x, starts=starts, limits=limits,
                 strides=None if all(s == 1 for s in strides) else strides)

    steps = np.diff(flat)
    if flat.size == 1 or (flat.size > 1 and steps[0] >= 1 and (steps == steps[0]).all()):
        step = int(steps[0]) if flat.size > 1 else 1
        gathered = piece(int(flat[0]), int(flat[-1]) + 1, step)
    elif flat.size <= MAX_GATHER_SLICES:
        gathered = im.op("concat", [piece(int(i), int(i) + 1, 1) for i in flat], axis=axis)
    else:
        raise _NodeProblem(f"a gather of {flat.size} scattered indices is not supported "
                           f"(at most {MAX_GATHER_SLICES}, or evenly spaced ones)")
    return im.reshape(gathered, shape[:axis] + indices.shape + shape[axis + 1:])


@converts("GatherElements", attributes=("axis",))
def _gather_elements(im, node):
    x, index = im.tensor(node.input(0)), im.tensor(node.input(1))
    return indexing.take_along_axis(im, x, index, _axis(node.attr("axis"), _type_of(x).rank))


@converts("GatherND", defaults_only=("batch_dims",))
def _gather_nd(im, node):
    """`indices[..., :k]` index the first k dims of the data."""
    x, indices = im.tensor(node.input(0)), im.tensor(node.input(1))
    shape = _type_of(indices).shape
    count = shape[-1]
    if count > _type_of(x).rank:
        raise _NodeProblem(f"GatherND indices of {count} dims index data of rank "
                           f"{_type_of(x).rank}")
    positions = []
    for d in range(count):
        starts = [0] * len(shape)
        starts[-1] = d
        piece = im.op("slice", indices, starts=starts, limits=list(shape[:-1]) + [d + 1])
        positions.append(im.reshape(piece, shape[:-1]))
    return indexing.take(im, x, positions, 0)


@converts("Trilu", attributes=("upper",))
def _trilu(im, node):
    if node.input(1) and not im.is_static(node.input(1)):
        k = im.tensor(node.input(1))
        if _type_of(k).dtype != "i64" or math.prod(_type_of(k).shape) != 1:
            raise _NodeProblem("k must be one int64")
        k = im.reshape(k, ())
    else:
        k = int(_item(im.static(node.input(1), "k"))) if node.input(1) else 0
    return indexing.triangle(im, im.tensor(node.input(0)), k, upper=bool(node.attr("upper")))


@converts("CumSum", attributes=("exclusive", "reverse"))
def _cumsum(im, node):
    x = im.tensor(node.input(0))
    x_type = _type_of(x)
    axis = _axis(int(_item(im.static(node.input(1), "axis"))), x_type.rank)
    size = x_type.shape[axis]
    flip = lambda value: im.op("gather", value, im.constant(
        np.arange(size - 1, -1, -1, dtype=np.int64)), axis=axis)
    if node.attr("reverse"):
        x = flip(x)
    y = im.op("cumsum", x, axis=axis)
    if node.attr("exclusive") and size:
        # Each sum moved one place along: a zero first, the last sum dropped.
        first = x_type.shape[:axis] + (1,) + x_type.shape[axis + 1:]
        zeros = im.constant(np.zeros(first), x_type.dtype)
        limits = list(x_type.shape)
        limits[axis] = size - 1
        kept = im.op("slice", y, starts=[0] * x_type.rank, limits=limits)
        y = im.op("concat", [zeros, kept], axis=axis) if size > 1 else zeros
    return flip(y) if node.attr("reverse") else y


def _arg_extreme(im, node, x: ir.Value) -> ir.Value:
    """The index of the first (or, with select_last_index, the last)
    maximum of `x` along the node's axis."""
    axis = _axis(node.attr("axis"), _type_of(x).rank)
    keepdims = bool(node.attr("keepdims"))
    if not node.attr("select_last_index"):
        return im.op("argmax", x, axis=axis, keepdims=keepdims)
    # The last maximum is the first of the reversed dim, counted from its end.
    size = _type_of(x).shape[axis]
    reversed_x = im.op("gather", x, im.constant(np.arange(size - 1, -1, -1, dtype=np.int64)),
                       axis=axis)
    index = im.op("argmax", reversed_x, axis=axis, keepdims=keepdims)
    return im.op("sub", im.scalar(size - 1, index), index)


@converts("ArgMax", attributes=("axis", "keepdims", "select_last_index"))
def _argmax(im, node):
    return _arg_extreme(im, node, im.tensor(node.input(0)))


@converts("Not")
def _not(im, node):
    x = im.tensor(node.input(0), "i1")
    return im.op("select", x, im.scalar(False, x), im.scalar(True, x))


@converts("And", "Or", "Xor", defaults_only=_BROADCAST)
def _logical(im, node):
    lhs, rhs = im.tensor(node.input(0), "i1"), im.tensor(node.input(1), "i1")
    if node.op_type == "And":
        return im.op("select", lhs, rhs, im.scalar(False, lhs))
    if node.op_type == "Or":
        return im.op("select", lhs, im.scalar(True, lhs), rhs)
    return im.op("select", lhs, im.op("select", rhs, im.scalar(False, rhs),
                                      im.scalar(True, rhs)), rhs)


@converts("IsNaN")
def _is_nan(im, node):
    x = im.tensor(node.input(0))
    return im.op("compare", x, x, predicate="ne")


# -- compositions of nn ops ---------------------------------------------------


def _float_tensor(im, node, i: int = 0) -> ir.Value:
    """Input `i` as a tensor, which must be of a float type."""
    x = im.tensor(node.input(i))
    if _type_of(x).dtype not in ELEMENTWISE_FLOATS:
        raise _NodeProblem(f"{node.op_type} of element type {_type_of(x).dtype} is not "
                           "supported (only float, float16, bfloat16 and double)")
    return x


def _negative_part(im, x, alpha: float) -> ir.Value:
    """alpha * (exp(x) - 1)."""
    return im.op("mul", im.op("sub", im.op("exp", x), im.scalar(1.0, x)), im.scalar(alpha, x))


def _softplus(im, x) -> ir.Value:
    """log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): no overflow."""
    tail = im.op("log", im.op("add", im.scalar(1.0, x),
                               im.op("exp", im.op("neg", im.op("abs", x)))))
    return im.op("add", im.op("maximum", x, im.scalar(0.0, x)), tail)


@converts("Elu", "Selu", "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Swish", "Mish",
          attributes={"Elu": ("alpha",), "Selu": ("alpha", "gamma"), "Celu": ("alpha",),
                      "ThresholdedRelu": ("alpha",), "Swish": ("alpha",)})
def _activation(im, node):
    x = _float_tensor(im, node)
    kind = node.op_type
    if kind == "Softplus":
        return _softplus(im, x)
    if kind == "Mish":
        return im.op("mul", x, im.op("tanh", _softplus(im, x)))
    if kind == "Softsign":
        return im.op("div", x, im.op("add", im.scalar(1.0, x), im.op("abs", x)))
    if kind == "Swish":
        return im.op("mul", x, im.op("sigmoid", im.op("mul", x, im.scalar(node.attr("alpha"), x))))
    if kind == "ThresholdedRelu":
        above = im.op("compare", x, im.scalar(node.attr("alpha"), x), predicate="gt")
        return im.op("select", above, x, im.scalar(0.0, x))
    alpha = node.attr("alpha")
    if kind == "Celu":
        # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
        scaled = im.op("div", x, im.scalar(alpha, x))
        return im.op("add", im.op("maximum", x, im.scalar(0.0, x)),
                     im.op("minimum", _negative_part(im, scaled, alpha), im.scalar(0.0, x)))
    positive = im.op("compare", x, im.scalar(0.0, x), predicate="gt")
    y = im.op("select", positive, x, _negative_part(im, x, alpha))
    return im.op("mul", y, im.scalar(node.attr("gamma"), x)) if kind == "Selu" else y


@converts("Sign")
def _sign(im, node):
    x = im.tensor(node.input(0))
    positive = im.op("compare", x, im.scalar(0, x), predicate="gt")
    negative = im.op("compare", x, im.scalar(0, x), predicate="lt")
    return im.op("select", positive, im.scalar(1, x),
                 im.op("select", negative, im.scalar(-1, x), im.scalar(0, x)))


@converts("IsInf", attributes=("detect_positive", "detect_negative"))
def _is_inf(im, node):
    x = _float_tensor(im, node)
    positive = im.op("compare", x, im.scalar(np.inf, x), predicate="eq")
    negative = im.op("compare", x, im.scalar(-np.inf, x), predicate="eq")
    detect_positive, detect_negative = node.attr("detect_positive"), node.attr("detect_negative")
    if detect_positive and detect_negative:
        return im.op("select", positive, im.scalar(True, positive), negative)
    if detect_positive:
        return positive
    if detect_negative:
        return negative
    return im.op("select", positive, im.scalar(False, positive), im.scalar(False, positive))


@converts("Mean")
def _mean(im, node):
    operands = im.operands(node)
    if _type_of(operands[0]).dtype not in ELEMENTWISE_FLOATS:
        raise _NodeProblem(f"Mean of element type {_type_of(operands[0]).dtype} is not "
                           "supported (only float, float16, bfloat16 and double)")
    total = operands[0]
    for operand in operands[1:]:
        total = im.op("add", total, operand)
    return im.op("div", total, im.scalar(float(len(operands)), total))


@converts("ArgMin", attributes=("axis", "keepdims", "select_last_index"))
def _argmin(im, node):
    x = im.tensor(node.input(0))
    # The first maximum of a reversal of order is the first minimum: -x for
    # floats, -1 - x (= ~x, no overflow) for integers.
    if _type_of(x).dtype in ELEMENTWISE_FLOATS:
        reversed_order = im.op("neg", x)
    elif _type_of(x).dtype in ("i32", "i64"):
        reversed_order = im.op("sub", im.scalar(-1, x), x)
    else:
        raise _NodeProblem(f"ArgMin of element type {_type_of(x).dtype} is not supported")
    return _arg_extreme(im, node, reversed_order)


_REDUCE_COMPOSED = ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                    "ReduceLogSumExp")


@converts(*_REDUCE_COMPOSED, attributes=("axes", "keepdims", "noop_with_empty_axes"))
def _reduce_composed(im, node):
    x = _float_tensor(im, node)
    kind = node.op_type
    axes = _reduce_axes(im, node, _type_of(x).rank)
    keepdims = bool(node.attr("keepdims"))
    if axes is None:  # the reduction of each element alone
        if kind == "ReduceL1":
            return im.op("abs", x)
        if kind == "ReduceL2":
            return im.op("abs", x)
        if kind == "ReduceSumSquare":
            return im.op("mul", x, x)
        return x if kind == "ReduceLogSumExp" else im.op("log", x)
    if kind == "ReduceLogSumExp":
        peak = im.op("reduce_max", x, axes=axes, keepdims=True)
        # An infinite maximum would give inf - inf: shift by 0 there.
        finite = im.op("compare", im.op("abs", peak), im.scalar(np.inf, peak), predicate="lt")
        peak = im.op("select", finite, peak, im.scalar(0.0, peak))
        total = im.op("reduce_sum", im.op("exp", im.op("sub", x, peak)), axes=axes,
                      keepdims=keepdims)
        if not keepdims:
            peak = im.reshape(peak, _type_of(total).shape)
        return im.op("add", im.op("log", total), peak)
    terms = {"ReduceL1": lambda: im.op("abs", x), "ReduceL2": lambda: im.op("mul", x, x),
             "ReduceSumSquare": lambda: im.op("mul", x, x), "ReduceLogSum": lambda: x}[kind]()
    total = im.op("reduce_sum", terms, axes=axes, keepdims=keepdims)
    if kind == "ReduceL2":
        return im.op("sqrt", total)
    return im.op("log", total) if kind == "ReduceLogSum" else total


@converts("LpNormalization", attributes=("axis", "p"))
def _lp_normalization(im, node):
    x = _float_tensor(im, node)
    axis, p = _axis(node.attr("axis"), _type_of(x).rank), node.attr("p")
    if p not in (1, 2):
        raise _NodeProblem(f"attribute 'p' = {p} is not supported (1 or 2)")
    terms = im.op("abs", x) if p == 1 else im.op("mul", x, x)
    norm = im.op("reduce_sum", terms, axes=(axis,), keepdims=True)
    if p == 2:
        norm = im.op("sqrt", norm)
    norm = im.op("broadcast_to", norm, result_type=_type_of(x))
    # A zero norm gives zeros (the reference's), not 0 / 0.
    zero = im.op("compare", norm, im.scalar(0.0, norm), predicate="eq")
    return im.op("select", zero, im.scalar(0.0, x),
                 im.op("div", x, im.op("select", zero, im.scalar(1.0, norm), norm)))


@converts("RMSNormalization", attributes=("axis", "epsilon"), defaults_only=("stash_type",))
def _rms_normalization(im, node):
    x = _float_tensor(im, node)
    x_type = _type_of(x)
    axis = _axis(node.attr("axis"), x_type.rank)
    normalized = x_type.shape[axis:]
    scale = im.tensor(node.input(1), x_type.dtype)
    if _type_of(scale).shape != normalized:
        scale = im.op("broadcast_to", scale, result_type=x_type.with_shape(normalized))
    return im.op("rms_norm", x, scale, axis=axis, epsilon=node.attr("epsilon"))


@converts("DepthToSpace", "SpaceToDepth", attributes=("blocksize", "mode"))
def _depth_space(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    if len(shape) != 4:
        raise _NodeProblem(f"{node.op_type} of rank {len(shape)} is not supported (rank 4)")
    n, c, h, w = shape
    b = node.attr("blocksize")
    if node.op_type == "SpaceToDepth":
        if h % b or w % b:
            raise _NodeProblem(f"blocksize {b} does not divide the spatial dims {[h, w]}")
        mode = node.attr("mode", b"DCR").decode()
        if mode not in ("DCR", "CRD"):
            raise _NodeProblem(f"attribute 'mode' = '{mode}' is not supported (DCR or CRD)")
        y = im.reshape(x, (n, c, h // b, b, w // b, b))
        y = im.op("transpose", y, perm=(0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4))
        return im.reshape(y, (n, c * b * b, h // b, w // b))
    if c % (b * b):
        raise _NodeProblem(f"blocksize {b} squared does not divide the channels {c}")
    mode = node.attr("mode").decode()
    if mode == "DCR":
        y = im.reshape(x, (n, b, b, c // (b * b), h, w))
        y = im.op("transpose", y, perm=(0, 3, 4, 1, 5, 2))
    elif mode == "CRD":
        y = im.reshape(x, (n, c // (b * b), b, b, h, w))
        y = im.op("transpose", y, perm=(0, 1, 4, 2, 5, 3))
    else:
        raise _NodeProblem(f"attribute 'mode' = '{mode}' is not supported (DCR or CRD)")
    return im.reshape(y, (n, c // (b * b), h * b, w * b))


def _negative_log_likelihood(im, node, log_probabilities: ir.Value) -> ir.Value:
    """The loss of NegativeLogLikelihoodLoss (and SoftmaxCrossEntropyLoss)
    on [N, C, d...] log-probabilities: the target class of each position
    picked through a one-hot mask of an iota over the classes."""
    x_type = _type_of(log_probabilities)
    if x_type.rank < 2:
        raise _NodeProblem(f"an input of rank {x_type.rank} is not supported (rank 2 or more)")
    target = im.tensor(node.input(1))
    if _type_of(target).dtype not in ("i32", "i64"):
        raise _NodeProblem(f"a target of element type {_type_of(target).dtype} is not supported")
    n, c, rest = x_type.shape[0], x_type.shape[1], x_type.shape[2:]
    if _type_of(target).shape != (n,) + rest:
        raise _NodeProblem(f"a target of shape {list(_type_of(target).shape)} for an input of "
                           f"shape {list(x_type.shape)} is not supported")
    index_type = x_type.with_dtype(_type_of(target).dtype)
    wide_target = im.op("broadcast_to", im.reshape(target, (n, 1) + rest), result_type=index_type)
    one_hot = im.op("compare", im.op("iota", result_type=index_type, axis=1), wide_target,
                    predicate="eq")
    zero = im.scalar(0.0, log_probabilities)
    picked = im.op("reduce_sum", im.op("select", one_hot, log_probabilities, zero), axes=(1,),
                   keepdims=False)
    # The weight of each position: the target class's (or 1), 0 where ignored.
    if node.input(2):
        weight = im.tensor(node.input(2), x_type.dtype)
        if _type_of(weight).shape != (c,):
            raise _NodeProblem(f"a weight of shape {list(_type_of(weight).shape)} is not "
                               f"supported (expected [{c}])")
        wide_weight = im.op("broadcast_to", im.reshape(weight, (1, c) + (1,) * len(rest)),
                            result_type=x_type)
        weights = im.op("reduce_sum", im.op("select", one_hot, wide_weight, zero), axes=(1,),
                        keepdims=False)
    else:
        weights = im.op("broadcast_to", im.scalar(1.0, picked), result_type=_type_of(picked))
    ignore_index = node.attr("ignore_index")
    if ignore_index is not None:
        ignored = im.op("compare", target, im.scalar(int(ignore_index), target), predicate="eq")
        weights = im.op("select", ignored, im.scalar(0.0, weights), weights)
    loss = im.op("mul", im.op("neg", picked), weights)
    reduction = node.attr("reduction").decode()
    axes = tuple(range(_type_of(loss).rank))
    if reduction == "none":
        return loss
    if reduction == "sum":
        return im.op("reduce_sum", loss, axes=axes, keepdims=False)
    if reduction == "mean":
        return im.op("div", im.op("reduce_sum", loss, axes=axes, keepdims=False),
                     im.op("reduce_sum", weights, axes=axes, keepdims=False))
    raise _NodeProblem(f"attribute 'reduction' = '{reduction}' is not supported")


@converts("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss",
          attributes=("ignore_index", "reduction"))
def _loss(im, node):
    x = _float_tensor(im, node)
    if node.op_type == "NegativeLogLikelihoodLoss":
        return _negative_log_likelihood(im, node, x)
    log_probabilities = im.op("log_softmax", x, axis=1) if _type_of(x).rank >= 2 else x
    return [_negative_log_likelihood(im, node, log_probabilities), log_probabilities]


@converts("Hardmax", attributes=("axis",))
def _hardmax(im, node):
    x = _float_tensor(im, node)
    x_type = _type_of(x)
    axis = _axis(node.attr("axis"), x_type.rank)
    shape = x_type.shape
    if im.opset < 13:  # the input flattened to 2-D at `axis` first
        x = im.reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))
        axis = 1
    index_type = _type_of(x).with_dtype("i64")
    first = im.op("broadcast_to", im.op("argmax", x, axis=axis, keepdims=True),
                  result_type=index_type)
    hit = im.op("compare", im.op("iota", result_type=index_type, axis=axis), first,
                predicate="eq")
    return im.reshape(im.op("select", hit, im.scalar(1.0, x), im.scalar(0.0, x)), shape)


@converts("OneHot", attributes=("axis",))
def _one_hot(im, node):
    indices = im.tensor(node.input(0))
    depth = int(_item(im.static(node.input(1), "depth")))
    values = im.static(node.input(2), "values").reshape(-1)
    if values.size != 2:
        raise _NodeProblem(f"values must be [off, on], got {values.size} values")
    if _type_of(indices).dtype not in ("i32", "i64"):
        indices = im.op("cast", indices, result_type=_type_of(indices).with_dtype("i64"))
    shape = _type_of(indices).shape
    axis = _axis(node.attr("axis"), len(shape) + 1)
    out_shape = shape[:axis] + (depth,) + shape[axis:]
    index_type = TensorType(out_shape, _type_of(indices).dtype)
    negative = im.op("compare", indices, im.scalar(0, indices), predicate="lt")
    indices = im.op("select", negative, im.op("add", indices, im.scalar(depth, indices)), indices)
    wide = im.op("broadcast_to", im.reshape(indices, shape[:axis] + (1,) + shape[axis:]),
                 result_type=index_type)
    hit = im.op("compare", im.op("iota", result_type=index_type, axis=axis), wide,
                predicate="eq")
    off, on = im.constant(values[:1].reshape(()), None), im.constant(values[1:].reshape(()), None)
    return im.op("select", hit, on, off)


@converts("EyeLike", attributes=("dtype", "k"))
def _eye_like(im, node):
    shape = im.shape(node.input(0))
    if len(shape) != 2:
        raise _NodeProblem(f"an input of rank {len(shape)} is not supported (rank 2)")
    if node.attr("dtype") is not None:
        dtype = im.onnx.helper.tensor_dtype_to_np_dtype(node.attr("dtype"))
    elif im.is_static(node.input(0)):
        dtype = im.static(node.input(0)).dtype
    else:
        dtype = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64,
                 "i1": np.bool_}.get(im.dtype(node.input(0)))
        if dtype is None:
            raise _NodeProblem(f"EyeLike of element type {im.dtype(node.input(0))} is not "
                               "supported")
    return np.eye(shape[0], shape[1], node.attr("k"), dtype=dtype)


@folds("Gather", attributes=("axis",))
def _fold_gather(im, node):
    return np.take(im.static(node.input(0)), im.static(node.input(1)), axis=node.attr("axis"))


@converts("Pad", attributes=("mode", "pads", "value"))
def _pad(im, node):
    x = im.tensor(node.input(0))
    shape = _type_of(x).shape
    mode = node.attr("mode").decode()
    if mode != "constant":
        raise _NodeProblem(f"pad mode '{mode}' is not supported")
    if im.opset < 11:
        pads, value, axes = node.attr("pads"), node.attr("value"), None
    else:
        pads = im.static(node.input(1), "pads")
        value = _item(im.static(node.input(2))) if node.input(2) else 0.0
        axes = im.static(node.input(3), "axes") if node.input(3) else None
    axes = range(len(shape)) if axes is None else [_axis(int(a), len(shape)) for a in axes]
    low, high = [0] * len(shape), [0] * len(shape)
    for i, axis in enumerate(axes):
        low[axis], high[axis] = int(pads[i]), int(pads[i + len(axes)])
    if min(low + high) < 0:
        raise _NodeProblem("negative pads are not supported")
    return im.op("pad", x, low=low, high=high, value=value)


# -- values known when the model is imported ----------------------------------


@converts("Constant", attributes=("value", "value_float", "value_floats", "value_int",
                                  "value_ints"))
def _constant(im, node):
    (name, value), = node.attrs.items()
    if name == "value":
        return im.onnx.numpy_helper.to_array(value)
    if name in ("value_float", "value_floats"):
        return np.array(value, np.float32)
    if name in ("value_int", "value_ints"):
        return np.array(value, np.int64)
    raise _NodeProblem(f"a constant given as '{name}' is not supported")


@converts("Shape", attributes=("start", "end"))
def _shape(im, node):
    shape = np.array(im.shape(node.input(0)), np.int64)
    start, end = node.attr("start"), node.attr("end")
    return shape[start:end]


@converts("Size")
def _size(im, node):
    return np.array(math.prod(im.shape(node.input(0))), np.int64)


@converts("ConstantOfShape", attributes=("value",))
def _constant_of_shape(im, node):
    value = node.attr("value")
    fill = im.onnx.numpy_helper.to_array(value).reshape(-1) if value is not None else \
        np.zeros(1, np.float32)
    return np.full([int(d) for d in im.static(node.input(0), "shape")], fill[0], fill.dtype)


def _integer_divide(a, b):
    return np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b))


_NUMPY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum,
          "Min": np.minimum, "Equal": np.equal, "Less": np.less, "LessOrEqual": np.less_equal,
          "Greater": np.greater, "GreaterOrEqual": np.greater_equal, "And": np.logical_and,
          "Or": np.logical_or, "Neg": np.negative, "Abs": np.abs, "Not": np.logical_not,
          "Sqrt": np.sqrt, "Exp": np.exp, "Log": np.log, "Floor": np.floor, "Ceil": np.ceil,
          "Reciprocal": np.reciprocal, "Identity": lambda x: x}


@folds(*_NUMPY, "Div", "Pow", "Sum", "Where", "Cast", "Range", attributes=_CAST,
       defaults_only=_BROADCAST)
def _fold_elementwise(im, node):
    arrays = [im.static(n) for n in node.proto.input if n]
    dtype = arrays[0].dtype
    if node.op_type == "Div":
        if np.issubdtype(dtype, np.integer):
            return _integer_divide(*arrays)
        return np.divide(*arrays).astype(dtype)
    if node.op_type == "Pow":
        return np.power(*arrays).astype(dtype)
    if node.op_type == "Sum":
        return sum(arrays[1:], arrays[0])
    if node.op_type == "Where":
        return np.where(*arrays)
    if node.op_type == "Cast":
        return arrays[0].astype(im.onnx.helper.tensor_dtype_to_np_dtype(node.attr("to")))
    if node.op_type == "Range":
        start, limit, delta = (a.reshape(()) for a in arrays)
        return np.arange(start, limit, delta, dtype=dtype)
    result = _NUMPY[node.op_type](*arrays)
    return result if result.dtype == np.bool_ else result.astype(dtype)


@folds("Mod", attributes=("fmod",))
def _fold_mod(im, node):
    a, b = im.static(node.input(0)), im.static(node.input(1))
    return (np.fmod if node.attr("fmod") else np.mod)(a, b).astype(a.dtype)


@folds("Trilu", attributes=("upper",))
def _fold_trilu(im, node):
    x = im.static(node.input(0))
    k = int(_item(im.static(node.input(1)))) if node.input(1) else 0
    return np.triu(x, k) if node.attr("upper") else np.tril(x, k)


@folds("Tile")
def _fold_tile(im, node):
    return np.tile(im.static(node.input(0)), [int(r) for r in im.static(node.input(1))])


# -- more compositions: hyperbolic and inverse trigonometric functions, ------
# -- gated and piecewise activations, normalisations over windows ----------


def _odd_series(im, x, coefficients) -> ir.Value:
    """x (c0 + c1 x^2 + c2 x^4 + ...), Horner's rule in x^2."""
    x2 = im.op("mul", x, x)
    value = im.scalar(coefficients[-1], x)
    for c in reversed(coefficients[:-1]):
        value = im.op("add", im.op("mul", value, x2), im.scalar(c, x))
    return im.op("mul", x, value)


# Below this magnitude, sinh, asinh and atanh take their Taylor series
# (to x^7: a relative error under 1e-10 there), where the closed forms
# lose the leading digits to cancellation (e^x - e^-x, log(1 + small)).
_SERIES_BOUND = 0.125
_SERIES = {"Sinh": (1.0, 1 / 6, 1 / 120, 1 / 5040),
           "Asinh": (1.0, -1 / 6, 3 / 40, -5 / 112),
           "Atanh": (1.0, 1 / 3, 1 / 5, 1 / 7)}


def _near_zero(im, x, kind: str, closed_form: ir.Value) -> ir.Value:
    small = im.op("compare", im.op("abs", x), im.scalar(_SERIES_BOUND, x), predicate="lt")
    return im.op("select", small, _odd_series(im, x, _SERIES[kind]), closed_form)


def _atan(im, x) -> ir.Value:
    """atan(x): |x| > 1 reflected to 1/x (atan(x) = +-pi/2 - atan(1/x)),
    the argument halved three times (atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))),
    to |t| <= tan(pi/32)), then its series to t^11."""
    outside = im.op("compare", im.op("abs", x), im.scalar(1.0, x), predicate="gt")
    t = im.op("select", outside, im.op("div", im.scalar(1.0, x), x), x)
    for _ in range(3):
        t = im.op("div", t, im.op("add", im.scalar(1.0, t), im.op("sqrt", im.op(
            "add", im.scalar(1.0, t), im.op("mul", t, t)))))
    inner = im.op("mul", _odd_series(im, t, (1.0, -1 / 3, 1 / 5, -1 / 7, 1 / 9, -1 / 11)),
                  im.scalar(8.0, t))
    positive = im.op("compare", x, im.scalar(0.0, x), predicate="gt")
    quarter_turn = im.op("select", positive, im.scalar(math.pi / 2, x), im.scalar(-math.pi / 2, x))
    return im.op("select", outside, im.op("sub", quarter_turn, inner), inner)


@converts("Sinh", "Cosh", "Tan", "Asinh", "Acosh", "Atanh", "Atan", "Asin", "Acos")
def _trigonometric(im, node):
    x = _float_tensor(im, node)
    kind = node.op_type
    if kind == "Tan":
        return im.op("div", im.op("sin", x), im.op("cos", x))
    if kind in ("Sinh", "Cosh"):
        grow, decay = im.op("exp", x), im.op("exp", im.op("neg", x))
        half = im.op("mul", im.op("sub" if kind == "Sinh" else "add", grow, decay),
                     im.scalar(0.5, x))
        return _near_zero(im, x, kind, half) if kind == "Sinh" else half
    one = im.scalar(1.0, x)
    if kind == "Asinh":  # sign(x) log(|x| + sqrt(x^2 + 1))
        magnitude = im.op("abs", x)
        log = im.op("log", im.op("add", magnitude, im.op("sqrt", im.op(
            "add", im.op("mul", x, x), one))))
        negative = im.op("compare", x, im.scalar(0.0, x), predicate="lt")
        return _near_zero(im, x, kind, im.op("select", negative, im.op("neg", log), log))
    if kind == "Acosh":  # log(x + sqrt(x^2 - 1))
        return im.op("log", im.op("add", x, im.op("sqrt", im.op(
            "sub", im.op("mul", x, x), one))))
    if kind == "Atanh":  # log((1 + x) / (1 - x)) / 2
        log = im.op("log", im.op("div", im.op("add", one, x), im.op("sub", one, x)))
        return _near_zero(im, x, kind, im.op("mul", log, im.scalar(0.5, x)))
    if kind == "Atan":
        return _atan(im, x)
    # asin(x) = atan(x / sqrt(1 - x^2)) (+-1 gives +-inf, whose atan is +-pi/2)
    asin = _atan(im, im.op("div", x, im.op("sqrt", im.op("sub", one, im.op("mul", x, x)))))
    return asin if kind == "Asin" else im.op("sub", im.scalar(math.pi / 2, x), asin)


@converts("PRelu")
def _prelu(im, node):
    x = im.tensor(node.input(0))
    slope = im.tensor(node.input(1), _type_of(x).dtype)
    negative = im.op("compare", x, im.scalar(0, x), predicate="lt")
    return im.op("select", negative, im.op("mul", x, slope), x)


@converts("Shrink", attributes=("bias", "lambd"))
def _shrink(im, node):
    x = _float_tensor(im, node)
    bias, lambd = node.attr("bias"), node.attr("lambd")
    below = im.op("compare", x, im.scalar(-lambd, x), predicate="lt")
    above = im.op("compare", x, im.scalar(lambd, x), predicate="gt")
    return im.op("select", below, im.op("add", x, im.scalar(bias, x)),
                 im.op("select", above, im.op("sub", x, im.scalar(bias, x)), im.scalar(0.0, x)))


@converts("SwiGLU", attributes=("alpha",))
def _swiglu(im, node):
    gate, value = _float_tensor(im, node, 0), _float_tensor(im, node, 1)
    if _type_of(gate).shape != _type_of(value).shape:
        raise _NodeProblem(f"SwiGLU's inputs differ in shape: {_type_of(gate)} and "
                           f"{_type_of(value)}")
    scaled = im.op("mul", gate, im.scalar(node.attr("alpha"), gate))
    return im.op("mul", im.op("mul", gate, im.op("sigmoid", scaled)), value)


def _standardized(im, x, axes, epsilon: float) -> ir.Value:
    """(x - mean) / sqrt(variance + epsilon) over `axes`."""
    mean = im.op("reduce_mean", x, axes=tuple(axes), keepdims=True)
    centred = im.op("sub", x, mean)
    variance = im.op("reduce_mean", im.op("mul", centred, centred), axes=tuple(axes),
                     keepdims=True)
    return im.op("mul", centred, im.op("rsqrt", im.op("add", variance,
                                                       im.scalar(epsilon, variance))))


@converts("MeanVarianceNormalization", attributes=("axes",))
def _mean_variance_normalization(im, node):
    x = _float_tensor(im, node)
    rank = _type_of(x).rank
    axes = sorted({_axis(a, rank) for a in node.attr("axes")})
    # The function body's epsilon: sqrt(variance) + 1e-9 in the division.
    mean = im.op("reduce_mean", x, axes=tuple(axes), keepdims=True)
    centred = im.op("sub", x, mean)
    variance = im.op("reduce_mean", im.op("mul", centred, centred), axes=tuple(axes),
                     keepdims=True)
    return im.op("div", centred, im.op("add", im.op("sqrt", variance), im.scalar(1e-9, variance)))


@converts("InstanceNormalization", attributes=("epsilon",))
def _instance_normalization(im, node):
    x = _float_tensor(im, node)
    x_type = _type_of(x)
    if x_type.rank < 3:
        raise _NodeProblem(f"instance normalization needs an input of rank >= 3, got {x_type}")
    y = _standardized(im, x, range(2, x_type.rank), node.attr("epsilon"))
    channel_shape = (x_type.shape[1],) + (1,) * (x_type.rank - 2)
    scale = im.reshape(im.tensor(node.input(1), x_type.dtype), channel_shape)
    bias = im.reshape(im.tensor(node.input(2), x_type.dtype), channel_shape)
    return im.op("add", im.op("mul", y, scale), bias)


# `stash_type` = 1 computes the statistics in f32, as these compositions do
# for f16 and bf16 inputs.
@converts("GroupNormalization", attributes=("epsilon", "num_groups"),
          defaults_only=("stash_type",))
def _group_normalization(im, node):
    x = _float_tensor(im, node)
    x_type = _type_of(x)
    groups = node.attr("num_groups")
    n, c = x_type.shape[:2]
    if x_type.rank < 3 or c % groups:
        raise _NodeProblem(f"group normalization of {x_type} in {groups} groups is not "
                           "supported (rank >= 3, channels a multiple of the groups)")
    grouped = im.reshape(x, (n, groups, (c // groups) * math.prod(x_type.shape[2:])))
    y = im.reshape(_standardized(im, grouped, (2,), node.attr("epsilon")), x_type.shape)
    # Opset 18 scales each group, opset 21 each channel.
    per_group = im.opset < 21
    length = groups if per_group else c
    params = []
    for i in (1, 2):
        param = im.tensor(node.input(i), x_type.dtype)
        if _type_of(param).shape != (length,):
            raise _NodeProblem(f"GroupNormalization's input {i} is {_type_of(param)}; "
                               f"expected {length} values")
        if per_group:
            param = im.reshape(im.op("broadcast_to", im.reshape(param, (groups, 1)),
                                     result_type=x_type.with_shape((groups, c // groups))), (c,))
        params.append(im.reshape(param, (c,) + (1,) * (x_type.rank - 2)))
    return im.op("add", im.op("mul", y, params[0]), params[1])


@converts("LRN", attributes=("alpha", "beta", "bias", "size"))
def _lrn(im, node):
    x = _float_tensor(im, node)
    x_type = _type_of(x)
    size = node.attr("size")
    before, after = (size - 1) // 2, size // 2  # floor and ceil of (size - 1) / 2
    squares = im.op("mul", x, x)
    low, high = [0] * x_type.rank, [0] * x_type.rank
    low[1], high[1] = before, after
    padded = im.op("pad", squares, low=low, high=high, value=0.0)
    channels = x_type.shape[1]
    total = None
    for offset in range(size):
        starts = [0] * x_type.rank
        starts[1] = offset
        limits = list(_type_of(padded).shape)
        limits[1] = offset + channels
        window = im.op("slice", padded, starts=starts, limits=limits)
        total = window if total is None else im.op("add", total, window)
    scale = im.op("add", im.scalar(node.attr("bias"), x),
                  im.op("mul", total, im.scalar(node.attr("alpha") / size, x)))
    return im.op("div", x, im.op("pow", scale, im.scalar(node.attr("beta"), x)))


@converts("Det")
def _det(im, node):
    x = _float_tensor(im, node)
    shape = _type_of(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] > 3:
        raise _NodeProblem(f"the determinant of {_type_of(x)} is not supported (square "
                           "matrices of order 1 to 3)")
    order, batch = shape[-1], shape[:-2]

    def entry(i, j):
        starts = [0] * len(batch) + [i, j]
        limits = list(batch) + [i + 1, j + 1]
        return im.reshape(im.op("slice", x, starts=starts, limits=limits), batch)

    def minor(rows, columns):  # a 2x2 determinant
        (r0, r1), (c0, c1) = rows, columns
        return im.op("sub", im.op("mul", entry(r0, c0), entry(r1, c1)),
                     im.op("mul", entry(r0, c1), entry(r1, c0)))

    if order == 1:
        return entry(0, 0)
    if order == 2:
        return minor((0, 1), (0, 1))
    terms = [im.op("mul", entry(0, j), minor((1, 2), tuple(k for k in range(3) if k != j)))
             for j in range(3)]
    return im.op("add", im.op("sub", terms[0], terms[1]), terms[2])


@converts("LpPool", attributes=_WINDOW + ("ceil_mode", "p"))
def _lp_pool(im, node):
    """(the sum over each window of |x|^p)^(1/p): an average pool (which
    counts the padding) times the window's size."""
    x = _float_tensor(im, node)
    x_shape = _type_of(x).shape
    one_d, kernel, strides, pads = _pool_window(im, node, x_shape)
    rank = len(kernel)
    if node.attr("ceil_mode") and any(
            _pool_output(size, k, s, b, e, True) != _pool_output(size, k, s, b, e, False)
            for size, k, s, b, e in zip(x_shape[2:], kernel, strides, pads[:rank], pads[rank:])):
        raise _NodeProblem("Lp pooling in ceil mode with a partial last window is not supported")
    p = node.attr("p")
    magnitude = im.op("abs", x)
    powered = im.op("mul", x, x) if p == 2 else im.op("pow", magnitude, im.scalar(float(p), x))
    if one_d:
        powered = im.reshape(powered, x_shape[:2] + (1,) + x_shape[2:])
    mean = im.op("avg_pool2d", powered, kernel=_pairs(kernel, one_d, 1),
                 strides=_pairs(strides, one_d, 1), padding=_pads_2d(pads, one_d))
    total = im.op("mul", mean, im.scalar(float(math.prod(kernel)), mean))
    y = im.op("sqrt", total) if p == 2 else im.op("pow", total, im.scalar(1.0 / p, total))
    if one_d:
        shape = _type_of(y).shape
        y = im.reshape(y, shape[:2] + shape[3:])
    return y


@converts("Mod", attributes=("fmod",))
def _mod(im, node):
    """The remainder of the sign of `a` (fmod): nn.remainder of floats,
    a - b trunc(a / b) of integers of at most 32 bits (the division
    through double, exact there); of the sign of `b` (Python's %, integers
    only in ONNX), b added to a remainder of the other sign."""
    (a, b), narrow = _widened(im, im.operands(node))
    dtype = narrow or _type_of(a).dtype
    if dtype in ELEMENTWISE_FLOATS:
        remainder = im.op("remainder", a, b)
    else:
        remainder = im.op("sub", a, im.op("mul", _integer_division(im, a, b, dtype), b))
    if not node.attr("fmod"):
        zero = im.scalar(0.0 if dtype in ELEMENTWISE_FLOATS else 0, remainder)
        b_negative = im.op("compare", b, zero, predicate="lt")
        b_positive = im.op("compare", b, zero, predicate="gt")
        differs = im.op("select", im.op("compare", remainder, zero, predicate="lt"), b_positive,
                        b_negative)
        nonzero = im.op("compare", remainder, zero, predicate="ne")
        adjust = im.op("select", nonzero, differs, im.scalar(False, nonzero))
        remainder = im.op("select", adjust, im.op("add", remainder, b), remainder)
    return _narrowed(im, remainder, narrow)


_BITWISE = {"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"}


@converts(*_BITWISE, "BitwiseNot")
def _bitwise(im, node):
    operands, narrow = _widened(im, im.operands(node))
    if _type_of(operands[0]).dtype not in ("i32", "i64"):
        raise _NodeProblem(f"{node.op_type} of element type {_type_of(operands[0]).dtype} is "
                           "not supported (only integers)")
    if node.op_type == "BitwiseNot":
        return _narrowed(im, im.op("bitwise_xor", operands[0], im.scalar(-1, operands[0])),
                         narrow)
    return _narrowed(im, im.op(_BITWISE[node.op_type], *operands), narrow)


@converts("BitShift", attributes=("direction",))
def _bit_shift(im, node):
    """Shifts of the integers widened by their sign or zero extension, which
    move the same bits (a right shift of a zero-extended value is logical);
    uint64's right shift masks the copies of its top bit away."""
    (x, amount), narrow = _widened(im, im.operands(node))
    if _type_of(x).dtype not in ("i32", "i64"):
        raise _NodeProblem(f"BitShift of element type {_type_of(x).dtype} is not supported "
                           "(only integers)")
    direction = node.attr("direction").decode()
    if direction not in ("LEFT", "RIGHT"):
        raise _NodeProblem(f"attribute 'direction' = '{direction}' is not supported "
                           "(LEFT or RIGHT)")
    if direction == "LEFT":
        return _narrowed(im, im.op("shift_left", x, amount), narrow)
    shifted = im.op("shift_right", x, amount)
    if narrow == "ui64":
        # Keep the low 64 - amount bits; an amount of 64 or more (unsigned)
        # moves every bit out.
        kept = im.op("bitwise_xor", im.op("shift_left", im.scalar(-1, amount), im.op(
            "sub", im.scalar(64, amount), amount)), im.scalar(-1, amount))
        inside = im.op("compare", _ordered(im, amount, narrow),
                       _ordered(im, im.scalar(64, amount), narrow), predicate="lt")
        shifted = im.op("select", inside, im.op("bitwise_and", shifted, kept),
                        im.scalar(0, shifted))
    return _narrowed(im, shifted, narrow)


# The bits of one integer type read as another of the same width (a
# two's complement reinterpretation is nn.cast's truncation or extension).
_BITS = {"i8": 8, "ui8": 8, "i16": 16, "ui16": 16, "i32": 32, "ui32": 32, "i64": 64, "ui64": 64}


@converts("BitCast", attributes=("to",))
def _bit_cast(im, node):
    x = im.tensor(node.input(0))
    source, target = _type_of(x).dtype, _nn_dtype(node.attr("to"))
    if source == "i1" and target in ("i8", "ui8"):  # ONNX's bool is a byte of 0 or 1
        return im.op("cast", x, result_type=_type_of(x).with_dtype(target))
    if source in _BITS and target in _BITS and _BITS[source] == _BITS[target]:
        if source == target:
            return x
        return im.op("cast", x, result_type=_type_of(x).with_dtype(target))
    name = _onnx_dtype_name(node.attr("to"))
    raise _NodeProblem(f"a BitCast of {_onnx_name(source)} to {name} is not supported (only "
                       "between integers of one width)")


# -- recurrent layers, unrolled over their static sequence -----------------------

_RECURRENT = ("activation_alpha", "activation_beta", "activations", "clip", "direction",
              "hidden_size", "layout")
# The gates each op type computes, in the order of its weights' rows, and
# its default activations (f, g[, h]).
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTIVATIONS = {"RNN": ("Tanh",), "GRU": ("Sigmoid", "Tanh"),
                        "LSTM": ("Sigmoid", "Tanh", "Tanh")}


def _activation_function(im, name: str):
    functions = {"Sigmoid": lambda v: im.op("sigmoid", v), "Tanh": lambda v: im.op("tanh", v),
                 "Relu": lambda v: im.op("relu", v)}
    if name not in functions:
        raise _NodeProblem(f"activation '{name}' is not supported (Sigmoid, Tanh or Relu)")
    return functions[name]


def _rows(im, x, start: int, stop: int) -> ir.Value:
    """x[..., start:stop] of a 2-D tensor."""
    rows = _type_of(x).shape[0]
    return im.op("slice", x, starts=[0, start], limits=[rows, stop])


@converts("RNN", "GRU", "LSTM",
          attributes={"RNN": _RECURRENT, "GRU": _RECURRENT + ("linear_before_reset",),
                      "LSTM": _RECURRENT + ("input_forget",)})
def _recurrent(im, node):
    """The layer step by step: one matmul of every step's inputs with each
    direction's W, then per step a matmul of the hidden state with R and
    the gates (ONNX's equations); sequence lengths given at run time hold
    the state and zero the output past each sequence's end (forward only)."""
    kind = node.op_type
    x = _float_tensor(im, node)
    dtype = _type_of(x).dtype
    hidden = node.attr("hidden_size")
    direction = node.attr("direction").decode()
    if direction not in ("forward", "reverse", "bidirectional"):
        raise _NodeProblem(f"attribute 'direction' = '{direction}' is not supported")
    if kind == "LSTM" and node.attr("input_forget"):
        raise _NodeProblem("LSTM with coupled input and forget gates (input_forget = 1) is not "
                           "supported")
    if node.attr("activation_alpha") or node.attr("activation_beta"):
        raise _NodeProblem("attributes 'activation_alpha' and 'activation_beta' are not "
                           "supported")
    directions = 2 if direction == "bidirectional" else 1
    # RNN's spec states two activations by default, for two directions.
    given = node.attr("activations") if "activations" in node.attrs else None
    names = [n.decode() if isinstance(n, bytes) else n for n in
             (given or _DEFAULT_ACTIVATIONS[kind] * directions)]
    per_direction = len(_DEFAULT_ACTIVATIONS[kind])
    if len(names) != per_direction * directions:
        raise _NodeProblem(f"{len(names)} activations given; {kind} takes {per_direction} per "
                           "direction")
    layout = node.attr("layout")
    if layout:
        x = im.op("transpose", x, perm=(1, 0, 2))
    steps, batch, features = _type_of(x).shape
    gates = _GATES[kind]
    weights, recurrences = im.tensor(node.input(1), dtype), im.tensor(node.input(2), dtype)
    bias = im.tensor(node.input(3), dtype) if node.input(3) else None
    lengths = None
    if node.input(4):
        if im.is_static(node.input(4)) and np.all(im.static(node.input(4)) == steps):
            lengths = None
        elif direction != "forward":
            raise _NodeProblem(f"sequence lengths with direction '{direction}' are not "
                               "supported (only forward)")
        else:
            lengths = im.reshape(im.tensor(node.input(4), "i64"), (batch, 1))
            lengths = im.op("cast", lengths, result_type=TensorType((batch, 1), "i64"))
    clip = node.attr("clip")
    flat = im.reshape(x, (steps * batch, features))

    def direction_slice(value, d, shape):
        if value is None:
            return None
        shape_in = _type_of(value).shape
        starts = [d] + [0] * (len(shape_in) - 1)
        limits = [d + 1] + list(shape_in[1:])
        return im.reshape(im.op("slice", value, starts=starts, limits=limits), shape)

    def initial(i, d):
        value = im.tensor(node.input(i), dtype) if node.input(i) else None
        if value is not None and layout:
            value = im.op("transpose", value, perm=(1, 0, 2))
        if value is None:
            return im.constant(np.zeros((batch, hidden)), dtype)
        return direction_slice(value, d, (batch, hidden))

    outputs, finals, cells = [], [], []
    for d in range(directions):
        f, *others = [_activation_function(im, n) for n in
                      names[d * per_direction:(d + 1) * per_direction]]
        w = im.op("transpose", direction_slice(weights, d, (gates * hidden, features)),
                  perm=(1, 0))
        r = im.op("transpose", direction_slice(recurrences, d, (gates * hidden, hidden)),
                  perm=(1, 0))
        b = direction_slice(bias, d, (1, 2 * gates * hidden))
        projected = im.op("matmul", flat, w)  # every step's X W^T
        if b is not None:
            projected = im.op("add", projected, _rows(im, b, 0, gates * hidden))
            recurrent_bias = _rows(im, b, gates * hidden, 2 * gates * hidden)
        else:
            recurrent_bias = None
        peepholes = None
        if kind == "LSTM" and node.input(7):
            peepholes = direction_slice(im.tensor(node.input(7), dtype), d, (1, 3 * hidden))
        state, cell = initial(5, d), initial(6, d) if kind == "LSTM" else None
        order = range(steps - 1, -1, -1) if (direction == "reverse" or d == 1) else range(steps)
        step_outputs = [None] * steps

        def gate(values, k):
            return _rows(im, values, k * hidden, (k + 1) * hidden)

        def clipped(v):
            if not clip:
                return v
            return im.op("minimum", im.op("maximum", v, im.scalar(-clip, v)), im.scalar(clip, v))

        for t in order:
            xw = im.op("slice", projected, starts=[t * batch, 0],
                       limits=[(t + 1) * batch, gates * hidden])
            hr = im.op("matmul", state, r)
            if recurrent_bias is not None:
                hr = im.op("add", hr, recurrent_bias)
            if kind == "RNN":
                new_state = f(clipped(im.op("add", xw, hr)))
            elif kind == "GRU":
                z = f(clipped(im.op("add", gate(xw, 0), gate(hr, 0))))
                reset = f(clipped(im.op("add", gate(xw, 1), gate(hr, 1))))
                if node.attr("linear_before_reset"):
                    candidate = im.op("add", gate(xw, 2), im.op("mul", reset, gate(hr, 2)))
                else:
                    rh = im.op("matmul", im.op("mul", reset, state), _rows(im, r, 2 * hidden,
                                                                        3 * hidden))
                    if recurrent_bias is not None:
                        rh = im.op("add", rh, _rows(im, recurrent_bias, 2 * hidden, 3 * hidden))
                    candidate = im.op("add", gate(xw, 2), rh)
                candidate = others[0](clipped(candidate))
                one = im.scalar(1.0, z)
                new_state = im.op("add", im.op("mul", im.op("sub", one, z), candidate),
                                  im.op("mul", z, state))
            else:
                pre = im.op("add", xw, hr)
                i_pre, o_pre, f_pre, c_pre = (gate(pre, k) for k in range(4))
                if peepholes is not None:
                    i_pre = im.op("add", i_pre, im.op("mul", _rows(im, peepholes, 0, hidden),
                                                      cell))
                    f_pre = im.op("add", f_pre, im.op("mul", _rows(
                        im, peepholes, 2 * hidden, 3 * hidden), cell))
                input_gate, forget_gate = f(clipped(i_pre)), f(clipped(f_pre))
                new_cell = im.op("add", im.op("mul", forget_gate, cell),
                                 im.op("mul", input_gate, others[0](clipped(c_pre))))
                if peepholes is not None:
                    o_pre = im.op("add", o_pre, im.op("mul", _rows(
                        im, peepholes, hidden, 2 * hidden), new_cell))
                new_state = im.op("mul", f(clipped(o_pre)), others[1](new_cell))
            output = new_state
            if lengths is not None:
                running = im.op("compare", im.scalar(t, lengths), lengths, predicate="lt")
                output = im.op("select", running, new_state, im.scalar(0.0, new_state))
                new_state = im.op("select", running, new_state, state)
                if kind == "LSTM":
                    new_cell = im.op("select", running, new_cell, cell)
            state = new_state
            if kind == "LSTM":
                cell = new_cell
            step_outputs[t] = im.reshape(output, (1, 1, batch, hidden))
        outputs.append(step_outputs)
        finals.append(im.reshape(state, (1, batch, hidden)))
        cells.append(im.reshape(cell, (1, batch, hidden)) if kind == "LSTM" else None)

    def joined(values, axis):
        return values[0] if len(values) == 1 else im.op("concat", values, axis=axis)

    wanted = lambda i: len(node.proto.output) > i and node.proto.output[i] in im.used
    y = None
    if wanted(0):
        y = joined([joined([outputs[d][t] for d in range(directions)], 1)
                    for t in range(steps)], 0)
        if layout:
            y = im.op("transpose", y, perm=(2, 0, 1, 3))
    y_h = joined(finals, 0)
    y_c = joined(cells, 0) if kind == "LSTM" else None
    if layout:
        y_h = im.op("transpose", y_h, perm=(1, 0, 2))
        y_c = im.op("transpose", y_c, perm=(1, 0, 2)) if y_c is not None else None
    return [y, y_h, y_c] if kind == "LSTM" else [y, y_h]


@converts("RotaryEmbedding", attributes=("interleaved", "num_heads", "rotary_embedding_dim"))
def _rotary_embedding(im, node):
    """Each pair of the first `rotary_embedding_dim` features (halves, or
    neighbours where interleaved) rotated by its position's angle: the
    caches gathered at the position ids (or given per position)."""
    x = _float_tensor(im, node)
    shape = _type_of(x).shape
    if len(shape) == 3:
        heads = node.attr("num_heads")
        if not heads or shape[2] % heads:
            raise _NodeProblem("a 3-D RotaryEmbedding input needs 'num_heads' dividing its "
                               f"hidden size, got {heads}")
        x = im.op("transpose", im.reshape(x, (shape[0], shape[1], heads, shape[2] // heads)),
                  perm=(0, 2, 1, 3))
    elif len(shape) != 4:
        raise _NodeProblem(f"RotaryEmbedding of rank {len(shape)} is not supported (3 or 4)")
    batch, heads, length, head = _type_of(x).shape
    rotated = node.attr("rotary_embedding_dim") or head
    if rotated % 2 or rotated > head:
        raise _NodeProblem(f"rotary_embedding_dim {rotated} must be even and at most the head "
                           f"size {head}")
    half = rotated // 2
    caches = []
    for i in (1, 2):
        cache = im.tensor(node.input(i), _type_of(x).dtype)
        if node.input(3):
            cache = im.op("gather", cache, im.tensor(node.input(3), "i64"), axis=0)
        if _type_of(cache).shape != (batch, length, half):
            raise _NodeProblem(f"the cos and sin caches give {_type_of(cache)} per position; "
                               f"expected {batch}x{length}x{half}")
        caches.append(im.reshape(cache, (batch, 1, length, half)))
    cos, sin = caches

    def features(start, stop, step):
        return im.op("slice", x, starts=[0, 0, 0, start], limits=[batch, heads, length, stop],
                     strides=[1, 1, 1, step])

    if node.attr("interleaved"):
        first, second = features(0, rotated, 2), features(1, rotated, 2)
    else:
        first, second = features(0, half, 1), features(half, rotated, 1)
    real = im.op("sub", im.op("mul", first, cos), im.op("mul", second, sin))
    imaginary = im.op("add", im.op("mul", second, cos), im.op("mul", first, sin))
    if node.attr("interleaved"):
        pairs = [im.reshape(v, (batch, heads, length, half, 1)) for v in (real, imaginary)]
        parts = [im.reshape(im.op("concat", pairs, axis=4), (batch, heads, length, rotated))]
    else:
        parts = [real, imaginary]
    if rotated < head:
        parts.append(features(rotated, head, 1))
    y = im.op("concat", parts, axis=3) if len(parts) > 1 else parts[0]
    if len(shape) == 3:
        y = im.reshape(im.op("transpose", y, perm=(0, 2, 1, 3)), shape)
    return y


def _pad_or_crop(im, x, axis: int, before: int, after: int) -> ir.Value:
    """x padded with zeros (or cropped, where negative) along `axis`."""
    shape = list(_type_of(x).shape)
    starts, limits = [0] * len(shape), list(shape)
    starts[axis], limits[axis] = max(0, -before), shape[axis] - max(0, -after)
    if starts[axis] or limits[axis] != shape[axis]:
        x = im.op("slice", x, starts=starts, limits=limits)
    low, high = [0] * len(shape), [0] * len(shape)
    low[axis], high[axis] = max(0, before), max(0, after)
    if low[axis] or high[axis]:
        x = im.op("pad", x, low=low, high=high, value=0.0)
    return x


@converts("ConvTranspose", attributes=_WINDOW + ("group", "output_padding", "output_shape"))
def _conv_transpose(im, node):
    """A convolution of the input spread out by the strides (zeros between
    its elements) and padded by the kernel's reach less the pads, with the
    kernel flipped and its channels swapped, at stride 1."""
    x, weight = _float_tensor(im, node), im.tensor(node.input(1))
    bias = im.tensor(node.input(2)) if node.input(2) else None
    x_shape, w_shape = _type_of(x).shape, _type_of(weight).shape
    one_d = _as_2d(x_shape)
    if one_d:
        x = im.reshape(x, x_shape[:2] + (1,) + x_shape[2:])
        weight = im.reshape(weight, w_shape[:2] + (1,) + w_shape[2:])
    n, c_in, *spatial = _type_of(x).shape
    _, per_group, *kernel = _type_of(weight).shape
    rank = len(spatial)
    widen = (lambda values, fill: _pairs(values, True, fill)) if one_d else \
        (lambda values, fill: tuple(values))
    strides = widen(node.attr("strides", [1] * (rank - one_d)), 1)
    dilations = widen(node.attr("dilations", [1] * (rank - one_d)), 1)
    output_padding = widen(node.attr("output_padding", [0] * (rank - one_d)), 0)
    groups = node.attr("group")
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    full = [s * (size - 1) + p + r
            for s, size, p, r in zip(strides, spatial, output_padding, reach)]
    auto_pad = node.attr("auto_pad").decode()
    output_shape = node.attr("output_shape")
    if output_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        wanted = widen(output_shape, 1) if output_shape else \
            [size * s for size, s in zip(spatial, strides)]
        totals = [f - w for f, w in zip(full, wanted)]
        upper = auto_pad == "SAME_UPPER"
        begin = [t // 2 if upper else t - t // 2 for t in totals]
        end = [t - b for t, b in zip(totals, begin)]
    elif auto_pad in ("NOTSET", "VALID"):
        pads = node.attr("pads", [0] * 2 * (rank - one_d)) if auto_pad == "NOTSET" else \
            [0] * 2 * (rank - one_d)
        pads = _pads_2d(pads, True) if one_d else tuple(pads)
        begin, end = list(pads[:rank]), list(pads[rank:])
    else:
        raise _NodeProblem(f"attribute 'auto_pad' = '{auto_pad}' is not supported")
    # The input spread out: each element followed by stride - 1 zeros.
    spread = x
    if any(s > 1 for s in strides):
        fine = (n, c_in) + sum(((size, 1) for size in spatial), ())
        spread = im.reshape(x, fine)
        high = [0, 0] + sum(([0, s - 1] for s in strides), [])
        spread = im.op("pad", spread, low=[0] * len(high), high=high, value=0.0)
        spread = im.reshape(spread, (n, c_in) + tuple(size * s for size, s in
                                                      zip(spatial, strides)))
        spread = im.op("slice", spread, starts=[0] * (2 + rank), limits=[n, c_in] + [
            (size - 1) * s + 1 for size, s in zip(spatial, strides)])
    for i in range(rank):
        spread = _pad_or_crop(im, spread, 2 + i, reach[i] - 1 - begin[i],
                              reach[i] - 1 - end[i] + output_padding[i])
    # [C_in, C_out / g, k...] -> [C_out, C_in / g, k...], flipped in space.
    kernel_in = c_in // groups
    w = im.reshape(weight, (groups, kernel_in, per_group) + tuple(kernel))
    w = im.op("transpose", w, perm=(0, 2, 1) + tuple(range(3, 3 + rank)))
    w = im.reshape(w, (groups * per_group, kernel_in) + tuple(kernel))
    for i, k in enumerate(kernel):
        if k > 1:
            w = im.op("gather", w, im.constant(np.arange(k - 1, -1, -1, dtype=np.int64)),
                      axis=2 + i)
    y = im.op("conv2d", spread, w, bias, strides=(1,) * rank, padding=(0,) * (2 * rank),
              dilations=tuple(dilations), groups=groups)
    if one_d:
        shape = _type_of(y).shape
        y = im.reshape(y, shape[:2] + shape[3:])
    return y


@converts("CausalConvWithState", attributes=("activation",))
def _causal_conv_with_state(im, node):
    """A depthwise convolution of the past state (zeros where absent)
    followed by the input, unpadded; the new state is the last k - 1
    positions of that sequence."""
    x = _float_tensor(im, node)
    dtype = _type_of(x).dtype
    weight = im.tensor(node.input(1), dtype)
    batch, channels, length = _type_of(x).shape
    w_shape = _type_of(weight).shape
    if len(w_shape) != 3 or w_shape[:2] != (channels, 1):
        raise _NodeProblem(f"the weight is {_type_of(weight)}; expected {channels}x1xk")
    k = w_shape[2]
    bias = im.tensor(node.input(2), dtype) if node.input(2) else None
    if node.input(3):
        past = im.tensor(node.input(3), dtype)
    else:
        past = im.constant(np.zeros((batch, channels, k - 1)), dtype)
    if _type_of(past).shape != (batch, channels, k - 1):
        raise _NodeProblem(f"the past state is {_type_of(past)}; expected "
                           f"{batch}x{channels}x{k - 1}")
    sequence = im.op("concat", [past, x], axis=2) if k > 1 else x
    total = length + k - 1
    y = im.op("conv2d", im.reshape(sequence, (batch, channels, 1, total)),
              im.reshape(weight, (channels, 1, 1, k)), bias, strides=(1, 1),
              padding=(0, 0, 0, 0), dilations=(1, 1), groups=channels)
    y = im.reshape(y, (batch, channels, length))
    activation = node.attr("activation").decode()
    if activation in ("silu", "swish"):
        y = im.op("silu", y)
    elif activation != "none":
        raise _NodeProblem(f"attribute 'activation' = '{activation}' is not supported "
                           "(none, silu or swish)")
    state = im.op("slice", sequence, starts=[0, 0, total - (k - 1)],
                  limits=[batch, channels, total])
    return [y, state]


# `chunk_size` is a hint to chunk-parallel kernels: the result is the same.
@converts("LinearAttention", attributes=("chunk_size", "kv_num_heads", "q_num_heads", "scale",
                                         "update_rule"))
def _linear_attention(im, node):
    """The recurrence token by token, in f32 (ONNX's equations): the state
    decayed (gated rules), corrected toward the value (delta rules), grown
    by k v^T, and read by each query head of its key/value head's group."""
    def f32(value):
        t = _type_of(value)
        return value if t.dtype == "f32" else im.op("cast", value, result_type=t.with_dtype("f32"))

    query = _float_tensor(im, node)
    key, value = im.tensor(node.input(1)), im.tensor(node.input(2))
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    rule = node.attr("update_rule").decode()
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise _NodeProblem(f"attribute 'update_rule' = '{rule}' is not supported")
    if not q_heads or not kv_heads or q_heads % kv_heads:
        raise _NodeProblem(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads "
                           f"{kv_heads}")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gating != bool(node.input(4)) or delta != bool(node.input(5)):
        raise _NodeProblem(f"update rule '{rule}' takes {'a' if gating else 'no'} decay and "
                           f"{'a' if delta else 'no'} beta input")
    batch, steps, q_width = _type_of(query).shape
    d_k, d_v = q_width // q_heads, _type_of(value).shape[2] // kv_heads
    group = q_heads // kv_heads

    def heads(x, count):  # (B, T, H*D) -> (B, H, T, D) in f32
        b, t, width = _type_of(x).shape
        return im.op("transpose", im.reshape(f32(x), (b, t, count, width // count)),
                     perm=(0, 2, 1, 3))

    def step(x, t):  # (B, H, T, D) at t -> (B, H, 1, D)
        b, h, _, d = _type_of(x).shape
        return im.op("slice", x, starts=[0, 0, t, 0], limits=[b, h, t + 1, d])

    q, k, v = heads(query, q_heads), heads(key, kv_heads), heads(value, kv_heads)
    decay = beta = None
    if gating:
        g = f32(im.tensor(node.input(4)))
        last = _type_of(g).shape[2]
        if last not in (kv_heads, kv_heads * d_k):
            raise _NodeProblem(f"the decay's last dim {last} must be kv_num_heads or "
                               "kv_num_heads * d_k")
        decay = heads(g, kv_heads)  # (B, H, T, 1 or d_k)
    if delta:
        b_in = f32(im.tensor(node.input(5)))
        last = _type_of(b_in).shape[2]
        if last not in (kv_heads, 1):
            raise _NodeProblem(f"beta's last dim {last} must be kv_num_heads or 1")
        beta = heads(b_in, last)  # (B, H or 1, T, 1)
    if node.input(3):
        past = im.tensor(node.input(3))
        state_dtype = _type_of(past).dtype
        state = f32(past)
    else:
        state_dtype = _type_of(query).dtype
        state = im.constant(np.zeros((batch, kv_heads, d_k, d_v)), "f32")
    if _type_of(state).shape != (batch, kv_heads, d_k, d_v):
        raise _NodeProblem(f"the past state is {_type_of(state)}; expected "
                           f"{batch}x{kv_heads}x{d_k}x{d_v}")
    scale = node.attr("scale") or 1.0 / math.sqrt(d_k)
    outputs = []
    for t in range(steps):
        k_t, v_t = step(k, t), step(v, t)  # (B, H, 1, d)
        if gating:
            factor = im.op("exp", step(decay, t))  # (B, H, 1, 1 or d_k)
            factor = im.reshape(factor, (batch, kv_heads, _type_of(factor).shape[3], 1))
            state = im.op("mul", state, factor)
        if delta:
            retrieved = im.op("matmul", k_t, state)  # (B, H, 1, d_v)
            v_t = im.op("mul", step(beta, t), im.op("sub", v_t, retrieved))
        outer = im.op("mul", im.reshape(k_t, (batch, kv_heads, d_k, 1)), v_t)
        state = im.op("add", state, outer)
        read = state
        if group > 1:
            read = im.reshape(im.op("broadcast_to", im.reshape(
                state, (batch, kv_heads, 1, d_k, d_v)), result_type=TensorType(
                    (batch, kv_heads, group, d_k, d_v), "f32")), (batch, q_heads, d_k, d_v))
        outputs.append(im.op("mul", im.op("matmul", step(q, t), read),
                             im.scalar(scale, read)))
    y = im.op("concat", outputs, axis=2) if steps > 1 else outputs[0]
    y = im.reshape(im.op("transpose", y, perm=(0, 2, 1, 3)), (batch, steps, q_heads * d_v))
    dtype = _type_of(query).dtype
    if dtype != "f32":
        y = im.op("cast", y, result_type=_type_of(y).with_dtype(dtype))
    if state_dtype != "f32":
        state = im.op("cast", state, result_type=_type_of(state).with_dtype(state_dtype))
    return [y, state]


# -- GridSample: taps gathered from the image at computed indices ----------------


def _floor(im, x) -> ir.Value:
    """floor(x): the truncation (through i64), less one where it went up;
    x itself where it is integral already (at least 2^23, or 2^52 in f64,
    in magnitude), infinite or NaN."""
    truncated = im.op("cast", im.op("cast", x, result_type=_type_of(x).with_dtype("i64")),
                      result_type=_type_of(x))
    above = im.op("compare", truncated, x, predicate="gt")
    floor = im.op("sub", truncated, im.op("select", above, im.scalar(1.0, x), im.scalar(0.0, x)))
    integral = 2.0 ** (52 if _type_of(x).dtype == "f64" else 23)
    small = im.op("compare", im.op("abs", x), im.scalar(integral, x), predicate="lt")
    return im.op("select", small, floor, x)


@converts("Floor", "Ceil", "Round")
def _rounding(im, node):
    x = _float_tensor(im, node)
    if node.op_type == "Floor":
        return _floor(im, x)
    if node.op_type == "Ceil":
        return im.op("neg", _floor(im, im.op("neg", x)))
    return _round_half_even(im, x)


def _round_half_even(im, x) -> ir.Value:
    """x rounded to the nearest integer, halfway cases to the even one."""
    rounded = _floor(im, im.op("add", x, im.scalar(0.5, x)))
    tie = im.op("compare", im.op("sub", rounded, x), im.scalar(0.5, x), predicate="eq")
    half = _floor(im, im.op("mul", rounded, im.scalar(0.5, x)))
    odd = im.op("compare", im.op("add", half, half), rounded, predicate="ne")
    down = im.op("select", tie, odd, im.scalar(False, odd))
    rounded = im.op("select", down, im.op("sub", rounded, im.scalar(1.0, x)), rounded)
    # From 2^23 (2^52 in f64) on, x is integral and x + 0.5 may round up.
    integral = 2.0 ** (52 if _type_of(x).dtype == "f64" else 23)
    small = im.op("compare", im.op("abs", x), im.scalar(integral, x), predicate="lt")
    return im.op("select", small, rounded, x)


def _reflected(im, x, low: float, high: float) -> ir.Value:
    """x reflected at `low` and `high` until inside them (ONNX's reference)."""
    span = high - low
    results = []
    for edge, other, below in ((low, high, True), (high, low, False)):
        distance = im.op("sub", im.scalar(edge, x), x) if below else \
            im.op("sub", x, im.scalar(edge, x))
        turns = _floor(im, im.op("div", distance, im.scalar(span, x)))  # distance >= 0 here
        rest = im.op("sub", distance, im.op("mul", turns, im.scalar(span, x)))
        half = _floor(im, im.op("mul", turns, im.scalar(0.5, x)))
        even = im.op("compare", im.op("add", half, half), turns, predicate="eq")
        sign = 1.0 if below else -1.0
        near = im.op("add", im.scalar(edge, x), im.op("mul", rest, im.scalar(sign, x)))
        far = im.op("sub", im.scalar(other, x), im.op("mul", rest, im.scalar(sign, x)))
        results.append(im.op("select", even, near, far))
    below = im.op("compare", x, im.scalar(low, x), predicate="lt")
    above = im.op("compare", x, im.scalar(high, x), predicate="gt")
    return im.op("select", below, results[0], im.op("select", above, results[1], x))


def _either(im, a, b) -> ir.Value:
    """a or b, of booleans."""
    return im.op("select", a, a, b)


def _cubic_weights(im, t) -> list[ir.Value]:
    """Keys' cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2
    for a fraction t in [0, 1)."""
    a = -0.75

    def near(d):  # |d| <= 1
        return im.op("add", im.op("mul", im.op("mul", im.op("sub", im.op(
            "mul", d, im.scalar(a + 2, d)), im.scalar(a + 3, d)), d), d), im.scalar(1.0, d))

    def far(d):  # 1 < |d| < 2
        inner = im.op("add", im.op("mul", im.op("sub", im.op("mul", d, im.scalar(a, d)),
                                                  im.scalar(5 * a, d)), d), im.scalar(8 * a, d))
        return im.op("sub", im.op("mul", inner, d), im.scalar(4 * a, d))

    one = im.scalar(1.0, t)
    return [far(im.op("add", t, one)), near(t), near(im.op("sub", one, t)),
            far(im.op("sub", im.scalar(2.0, t), t))]


@converts("GridSample", attributes=("align_corners", "mode", "padding_mode"))
def _grid_sample(im, node):
    """2-D sampling: each output position's taps (1 nearest, 2x2 linear, 4x4
    cubic) gathered from the image [N*H*W, C] at indices computed from the
    grid, weighted and summed; out-of-range taps read 0 (zeros), the edge
    (border) or their reflection (reflection), as ONNX's reference does."""
    x, grid = _float_tensor(im, node), _float_tensor(im, node, 1)
    if _type_of(x).rank != 4:
        raise _NodeProblem(f"GridSample of rank {_type_of(x).rank} is not supported (only 2-D "
                           "images, rank 4)")
    n, c, height, width = _type_of(x).shape
    _, out_h, out_w, _ = _type_of(grid).shape
    mode = node.attr("mode").decode()
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    padding = node.attr("padding_mode").decode()
    if mode not in ("nearest", "linear", "cubic") or padding not in ("zeros", "border",
                                                                       "reflection"):
        raise _NodeProblem(f"GridSample mode '{mode}' with padding '{padding}' is not supported")
    align = bool(node.attr("align_corners"))
    table = im.reshape(im.op("transpose", x, perm=(0, 2, 3, 1)), (n * height * width, c))
    position = (n, out_h, out_w)

    def coordinate(axis, size):
        g = im.reshape(im.op("slice", grid, starts=[0, 0, 0, axis],
                             limits=[n, out_h, out_w, axis + 1]), position)
        if align:
            value = im.op("mul", im.op("add", g, im.scalar(1.0, g)), im.scalar((size - 1) / 2, g))
        else:
            value = im.op("mul", im.op("sub", im.op("mul", im.op("add", g, im.scalar(1.0, g)),
                                                    im.scalar(float(size), g)),
                                       im.scalar(1.0, g)), im.scalar(0.5, g))
        if mode == "nearest":
            value = _round_half_even(im, value)
        low, high = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        if padding == "border":
            clamped = im.op("minimum", im.op("maximum", value, im.scalar(0.0, value)),
                            im.scalar(size - 1.0, value))
            outside = _either(im, im.op("compare", value, im.scalar(low, value), predicate="lt"),
                              im.op("compare", value, im.scalar(high, value), predicate="gt"))
            value = im.op("select", outside, clamped, value)
        elif padding == "reflection":
            value = _reflected(im, value, low, high)
        return value, low, high

    def tap_index(index, size, low, high):
        """A tap's integer index (a float) and whether it reads 0."""
        if padding == "border":
            return im.op("minimum", im.op("maximum", index, im.scalar(0.0, index)),
                         im.scalar(size - 1.0, index)), None
        if padding == "reflection":
            reflected = _reflected(im, index, low, high)
            truncated = im.op("cast", im.op("cast", reflected, result_type=TensorType(
                position, "i64")), result_type=_type_of(index))
            return truncated, None
        outside = _either(im, im.op("compare", index, im.scalar(0.0, index), predicate="lt"),
                          im.op("compare", index, im.scalar(size - 1.0, index), predicate="gt"))
        safe = im.op("minimum", im.op("maximum", index, im.scalar(0.0, index)),
                     im.scalar(size - 1.0, index))
        return safe, outside

    (gx, x_low, x_high), (gy, y_low, y_high) = coordinate(0, width), coordinate(1, height)
    image_base = im.constant((np.arange(n) * height * width).reshape(n, 1, 1), "i64")

    def read(row, column):
        (row, row_out), (column, column_out) = (tap_index(row, height, y_low, y_high),
                                                tap_index(column, width, x_low, x_high))
        flat = im.op("add", im.op("cast", im.op("add", im.op("mul", row, im.scalar(
            float(width), row)), column), result_type=TensorType(position, "i64")), image_base)
        values = im.op("gather", table, flat, axis=0)  # (N, Ho, Wo, C)
        hidden = [m for m in (row_out, column_out) if m is not None]
        if hidden:
            out = hidden[0] if len(hidden) == 1 else _either(im, *hidden)
            values = im.op("select", im.reshape(out, position + (1,)),
                           im.scalar(0.0, values), values)
        return values

    def weighted(values, weight):
        return im.op("mul", values, im.reshape(weight, position + (1,)))

    if mode == "nearest":
        y = read(gy, gx)
    else:
        x0, y0 = _floor(im, gx), _floor(im, gy)
        tx, ty = im.op("sub", gx, x0), im.op("sub", gy, y0)
        if mode == "linear":
            one = im.scalar(1.0, tx)
            offsets, wx, wy = (0, 1), [im.op("sub", one, tx), tx], [im.op("sub", one, ty), ty]
        else:
            offsets, wx, wy = (-1, 0, 1, 2), _cubic_weights(im, tx), _cubic_weights(im, ty)
        y = None
        for i, dy in enumerate(offsets):
            for j, dx in enumerate(offsets):
                tap = weighted(read(im.op("add", y0, im.scalar(float(dy), y0)),
                                    im.op("add", x0, im.scalar(float(dx), x0))),
                               im.op("mul", wy[i], wx[j]))
                y = tap if y is None else im.op("add", y, tap)
    return im.op("transpose", y, perm=(0, 3, 1, 2))


@converts("DynamicQuantizeLinear")
def _dynamic_quantize_linear(im, node):
    """uint8 quantisation by the range of x and 0: scale (max - min) / 255,
    zero point the rounded, saturated -min / scale (ONNX's function body)."""
    x = im.tensor(node.input(0))
    if _type_of(x).dtype != "f32":
        raise _NodeProblem(f"DynamicQuantizeLinear of {_onnx_name(_type_of(x).dtype)} is not "
                           "supported (only float)")
    axes = tuple(range(_type_of(x).rank))
    zero = im.constant(np.array(0.0), "f32")
    low = im.op("minimum", im.op("reduce_min", x, axes=axes), zero)
    high = im.op("maximum", im.op("reduce_max", x, axes=axes), zero)
    scale = im.op("div", im.op("sub", high, low), im.scalar(255.0, low))
    point = _round_half_even(im, im.op("sub", zero, im.op("div", low, scale)))
    point = im.op("minimum", im.op("maximum", point, zero), im.scalar(255.0, point))
    zero_point = im.op("cast", point, result_type=_type_of(point).with_dtype("ui8"))
    return [im.op("quantize", x, scale, zero_point, axis=0), scale, zero_point]
