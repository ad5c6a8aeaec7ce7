"""Lamina as a `torch.compile` backend.

    compiled = torch.compile(model, backend="lamina")
    compiled = torch.compile(model, backend="lamina", options={"target": "cpu:threads=2"})
    compiled = torch.compile(model.cuda(), backend="lamina", options={"target": "cuda:sm_90a"})
    y = compiled(x)                       # torch tensors in, torch tensors out

PyTorch finds the backend through the `torch_dynamo_backends` entry point.
Each graph that TorchDynamo captures (its inputs are the model's inputs and
the parameters it lifted) is exported again with `torch.export`, imported
with `from_exported_program` (the same op mapping as `lamina.from_torch`)
and compiled for the target. A graph that uses an op Lamina cannot express
runs in eager PyTorch instead, after a warning that lists each such op with
its source line; so does a graph with dynamic shapes or non-tensor inputs.

On a cuda target the tensors go through DLPack (`lamina.dlpack`): CUDA
tensors are used in place and the results are CUDA tensors, with no copy
through the host, repeated calls replaying a CUDA graph (option `graphs`:
False turns that off). Option `emulate` runs a cuda target's launch graph
on the CPU instead (`CUDATarget.emulation()`), CPU tensors in and out.

The compiled graphs compute forward values only: their outputs carry no
autograd history (the backend is for inference, as after `model.eval()`
under `torch.no_grad()`).
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np
import torch
import torch.utils._pytree as pytree

from lamina.diagnostics import CompileError
from lamina.dlpack import DLPackCalls
from lamina.importers.torch_import import (UnsupportedOpsError, _array, export,
                                           from_exported_program, parameter_names)
from lamina.targets import get_target


class LaminaFallbackWarning(UserWarning):
    """A captured graph runs in eager PyTorch, not in Lamina's code."""


def _fallback(gm: torch.fx.GraphModule, reason: str) -> Callable:
    warnings.warn(f"Lamina runs a captured graph in eager PyTorch: {reason}",
                  LaminaFallbackWarning, stacklevel=2)
    return gm.forward


class CompiledGraph:
    """A captured graph compiled by Lamina, called with torch tensors."""

    def __init__(self, compiled, program: "torch.export.ExportedProgram",
                 parameters: Sequence[str]):
        self.compiled = compiled
        self.out_spec = program.call_spec.out_spec
        state = dict(program.state_dict)
        state.update(program.constants)
        # Parameters of the graph module itself (not lifted by TorchDynamo).
        self.parameters = [state[name] for name in parameters]
        # A GPU function takes the tensors themselves, through DLPack.
        self.dlpack = isinstance(compiled, DLPackCalls)
        if self.dlpack:
            self.parameters = [p.detach().contiguous() for p in self.parameters]

    def __call__(self, *inputs):
        if self.dlpack:
            results = self.compiled(*[t.detach() for t in list(self.parameters) + list(inputs)])
            if not isinstance(results, tuple):
                results = (results,)
            return pytree.tree_unflatten(list(results), self.out_spec)
        arrays = [_array(t) for t in list(self.parameters) + list(inputs)]
        results = self.compiled(*arrays)
        if not isinstance(results, tuple):
            results = (results,)
        return pytree.tree_unflatten([_tensor(r) for r in results], self.out_spec)


def _tensor(array: np.ndarray) -> torch.Tensor:
    """A torch tensor sharing `array`'s memory (bf16 through its bits:
    torch.from_numpy takes no ml_dtypes.bfloat16)."""
    array = np.ascontiguousarray(array)
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def lamina_backend(gm: torch.fx.GraphModule, example_inputs: Sequence,
                   options: dict | None = None) -> Callable:
    """The `torch.compile` backend: `gm` compiled by Lamina for
    `options["target"]` (default `cpu`; on a cuda target, `emulate` and
    `graphs` as the module docstring says), or `gm.forward` (eager, with a
    LaminaFallbackWarning) where Lamina cannot compile it."""
    options = dict(options or {})
    target = get_target(options.pop("target", "cpu"))
    emulate = bool(options.pop("emulate", False))
    graphs = options.pop("graphs", None)
    if options:
        raise ValueError(f"unknown Lamina backend option(s): {', '.join(sorted(options))} "
                         "(known: target, emulate, graphs)")
    if (emulate or graphs is not None) and target.kind != "cuda":
        raise ValueError(f"the Lamina backend options emulate and graphs are for cuda targets, "
                         f"not '{target.name}'")
    inputs = tuple(example_inputs)
    for index, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            return _fallback(gm, f"input #{index} is a {type(value).__name__}, not a tensor "
                                 "(dynamic shapes are not supported)")
    try:
        program = export(gm, inputs)
    except CompileError as error:
        return _fallback(gm, str(error))
    try:
        module = from_exported_program(program, params="arguments")
    except UnsupportedOpsError as error:
        return _fallback(gm, "it uses ops Lamina does not support:\n" + str(error))
    if emulate:
        compiled = target.emulation().compile(module)
    elif graphs is not None:
        compiled = target.compile(module, graphs=graphs)
    else:
        compiled = target.compile(module)
    return CompiledGraph(compiled, program, [p for p in parameter_names(module) if p])


__all__ = ["CompiledGraph", "LaminaFallbackWarning", "lamina_backend"]
