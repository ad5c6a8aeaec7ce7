"""A GPU program's launch graph run against host memory: the emulation
behind `lamina-run --target=cuda:ARCH --emulate` and
`CUDATarget.emulation()`.

The program is compiled as for the GPU up to the `hw` stage (its memory
plan included) and its host program read as a `LaunchGraph`, the same
data the CUDA runtime launches from. Each launch of the graph becomes a
function of its own, `@NAME_launch_I`, holding that one `hw.launch` (its
scalar arguments as constants), and the kernels are compiled for the CPU
(`convert-hw-to-loops` and the CPU target's stages from bufferization),
all in one JIT module. A call binds the graph's regions to host memory
(the caller's input and output arrays, an arena allocated once at load)
and runs the commands in order, each launch a call of its function on
views of those arrays at the slots' offsets: the plan's offsets, the
launch order and the copies are those the GPU runs, checked against
NumPy without a GPU.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
from mlir import ir
from mlir.dialects import func

from lamina.cuda_runtime import (ARENA, INPUT, OUTPUT, BufferCopy, HostProgram,
                                 LaunchGraph, Slot)
from lamina.dialects import hw
from lamina.dlpack import DLPackCalls
from lamina.runtime import (ArrayFunction, CompiledFunction, _engine, aligned_empty,
                            clone_module, entry_signature)
from lamina.types import numpy_dtype


def split_launches(module: ir.Module, name: str) -> list[str]:
    """Replaces the host function `name` of an hw-stage module by one
    public function per `hw.launch` of it, in order, each taking the
    launch's memref arguments and making its scalar ones; returns their
    names."""
    host = next(op.operation for op in module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == name)
    launches = [op.operation for op in host.regions[0].blocks[0].operations
                if op.operation.name == hw.LaunchOp.op_name()]
    names = []
    with module.context, host.location:
        for index, launch in enumerate(launches):
            buffers = [v for v in launch.operands if isinstance(v.type, ir.MemRefType)]
            wrapper = func.FuncOp(f"{name}_launch_{index}",
                                  ir.FunctionType.get([v.type for v in buffers], []),
                                  ip=ir.InsertionPoint(module.body))
            entry = wrapper.add_entry_block()
            arguments = iter(entry.arguments)
            with ir.InsertionPoint(entry):
                operands = []
                for value in launch.operands:
                    if isinstance(value.type, ir.MemRefType):
                        operands.append(next(arguments))
                    else:
                        operands.append(value.owner.clone().results[0])
                ir.Operation.create(hw.LaunchOp.op_name(), operands=operands,
                                    attributes={name: launch.attributes[name]
                                                for name in launch.attributes})
                func.ReturnOp([])
            names.append(wrapper.name.value)
        host.erase()
    return names


def slot_view(slot: Slot, regions: dict) -> np.ndarray:
    """The array `slot` is in `regions` (input and output arrays by
    number, the arena's bytes): a view, no copy."""
    memory = regions[ARENA] if slot.region == ARENA else regions[slot.region][slot.index]
    raw = memory.reshape(-1).view(np.uint8)
    return raw[slot.offset:slot.offset + slot.nbytes].view(
        numpy_dtype(slot.type.dtype)).reshape(slot.type.shape)


class EmulatedCUDAFunction(DLPackCalls, ArrayFunction):
    """An entry function whose launch graph runs on the CPU (see the
    module docstring); `graph` is the graph it runs, `memory_plan` the
    plan of its arena (`memory_plan_of`)."""

    def __init__(self, graph: LaunchGraph, launches: Sequence[CompiledFunction], name: str,
                 inputs, results, module: ir.Module | None, compile_seconds: float):
        super().__init__(name, inputs, results, module, compile_seconds)
        self.graph = graph
        self.memory_plan: dict[str, int] | None = None
        self.launch_functions = tuple(launches)
        self.arena = aligned_empty((max(graph.arena_bytes, 1),), np.uint8, 256)

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        regions = {INPUT: list(arrays), OUTPUT: list(results), ARENA: self.arena}
        launches = iter(self.launch_functions)
        for command in self.graph.commands:
            if isinstance(command, BufferCopy):
                np.copyto(slot_view(command.target, regions),
                          slot_view(command.source, regions))
                continue
            views = [slot_view(a, regions) for a in command.arguments if isinstance(a, Slot)]
            next(launches).call_with_results(views, [])


def compile_emulated(target, module: ir.Module, entry: str | None, pipeline
                     ) -> EmulatedCUDAFunction:
    """`module`'s entry function, its launch graph run on the CPU by the
    emulation `target` (an EmulatedCUDATarget) with `pipeline` (its
    stages from `hw` on). Raises CompileError."""
    start = time.perf_counter()
    module = clone_module(module)
    name, inputs, results = entry_signature(module, entry)
    pipeline.run(module, until="hw")
    host = HostProgram.from_module(module, name)
    graph = LaunchGraph.from_host(host, None, len(inputs))
    wrappers = split_launches(module, name)
    stages = pipeline.mlir_stages
    lowered = pipeline.run(module, start=stages[stages.index("hw") + 1], until=stages[-1])
    engine, constants = _engine(lowered, target.runtime_libraries(), target.cpu.opt_level)
    launches = [CompiledFunction(engine, wrapper,
                                 [a.type for a in launch.arguments if isinstance(a, Slot)],
                                 [], None, 0.0, constants)
                for wrapper, launch in zip(wrappers, graph.launches)]
    function = EmulatedCUDAFunction(graph, launches, name, inputs, results, lowered,
                                    time.perf_counter() - start)
    function.memory_plan = host.memory_plan
    return function
