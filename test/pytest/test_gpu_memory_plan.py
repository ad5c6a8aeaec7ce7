"""The memory plan and the launch graph of GPU programs, without a GPU:
on a transformer block, a Llama-style block and a CNN (examples/), no two
buffers alive at once overlap in the arena, the arena (the peak a call
needs beside its arguments) is below the buffers' sum, every offset is
aligned, and the emulation, which runs the same launch graph against
host memory, matches the NumPy reference."""

import os

import numpy as np
import pytest

import lamina
from lamina.cuda_runtime import (ARENA, ARENA_ALIGNMENT, Alloc, BufferCopy, Constant, HostProgram,
                                 KernelLaunch, Launch, LaunchGraph, View)
from lamina.reference import compare, evaluate, random_inputs
from lamina.targets import get_target

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
PROGRAMS = ["attention.mlir", "llama_block.mlir", "convnet.mlir"]


def hw_stage(name: str, chip: str = "sm_90a"):
    module = lamina.parse_file(os.path.join(EXAMPLES, name))
    target = get_target(f"cuda:{chip}")
    target.pipeline().run(module, until="hw")
    return HostProgram.from_module(module, "main")


def buffer_lifetimes(host: HostProgram) -> dict[int, tuple[int, int, int, int]]:
    """Each buffer of the arena (a view of the one allocation) with its
    byte range and the first and last step that uses it or its views."""
    arena = next(s.result for s in host.steps if isinstance(s, Alloc))
    owner, ranges, lives = {}, {}, {}
    for position, step in enumerate(host.steps):
        if isinstance(step, View):
            if step.source == arena:
                owner[step.result] = step.result
                size = int(np.prod(step.type.shape)) * lamina.types.numpy_dtype(
                    step.type.dtype).itemsize
                ranges[step.result] = (step.offset, step.offset + size)
            elif step.source in owner:
                owner[step.result] = owner[step.source]
        elif isinstance(step, Launch):
            for argument in step.arguments:
                if argument in owner:
                    first, _ = lives.get(owner[argument], (position, position))
                    lives[owner[argument]] = (first, position)
    return {b: ranges[b] + lives[b] for b in lives}


@pytest.mark.parametrize("name", PROGRAMS)
def test_live_buffers_do_not_overlap_and_the_peak_is_below_the_sum(name):
    host = hw_stage(name)
    plan = host.memory_plan
    assert plan is not None and plan["buffers"] >= 2
    buffers = buffer_lifetimes(host)
    assert len(buffers) == plan["buffers"]
    for a, (low_a, high_a, first_a, last_a) in buffers.items():
        assert low_a % ARENA_ALIGNMENT == 0
        for b, (low_b, high_b, first_b, last_b) in buffers.items():
            if a < b and first_a <= last_b and first_b <= last_a:
                assert high_a <= low_b or high_b <= low_a, (name, a, b)
    assert plan["arena_bytes"] == max(high for _, high, _, _ in buffers.values())
    assert plan["arena_bytes"] < plan["buffer_bytes"]
    assert plan["buffer_bytes"] == sum(high - low for low, high, _, _ in buffers.values())


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_launch_graph_puts_every_intermediate_in_the_arena(name):
    host = hw_stage(name)
    graph = LaunchGraph.from_host(host, None, len(host.parameters) - 1)
    assert graph.arena_bytes >= host.memory_plan["arena_bytes"]
    assert len(graph.launches) == len(host.launches)
    slots = [a for launch in graph.launches for a in launch.arguments
             if not isinstance(a, Constant)]
    slots += [s for c in graph.commands if isinstance(c, BufferCopy) for s in (c.source, c.target)]
    assert {s.region for s in slots} == {"input", "output", ARENA}
    for launch in graph.launches:
        for slot in launch.arguments:
            if not isinstance(slot, Constant) and slot.region == ARENA:
                assert slot.offset + slot.nbytes <= graph.arena_bytes
    text = graph.describe()
    assert text.splitlines()[0] == (f"@main: {len(graph.launches)} launches, arena "
                                    f"{graph.arena_bytes} bytes")


def test_graph_slots_follow_views_and_constants():
    memref = lamina.types.MemRefType
    host = HostProgram("f", [memref((4, 8), "f32"), memref((32,), "f32")],
                       [Alloc(2, memref((1024,), "i8")),
                        View(3, 2, memref((4, 8), "f32"), 512),
                        View(4, 3, memref((32,), "f32")),
                        Constant(5, "i32", 7),
                        Launch("k", (1, 1, 1), (32, 1, 1), (0, 3, 5)),
                        Launch("k2", (1, 1, 1), (32, 1, 1), (4, 1))], values=6)
    graph = LaunchGraph.from_host(host, None, 1)
    first, second = graph.commands
    assert isinstance(first, KernelLaunch)
    assert [(s.region, s.index, s.offset) for s in first.arguments[:2]] == [
        ("input", 0, 0), (ARENA, 0, 512)]
    assert first.arguments[2] == Constant(5, "i32", 7)
    assert [(s.region, s.index, s.offset) for s in second.arguments] == [
        (ARENA, 0, 512), ("output", 0, 0)]
    assert graph.arena_bytes == 1024


@pytest.mark.parametrize("name,chip", [("attention.mlir", "sm_80"),
                                       ("llama_block.mlir", "sm_90a"),
                                       ("convnet.mlir", "sm_80")])
def test_the_emulation_runs_the_launch_graph_and_matches_numpy(name, chip):
    module = lamina.parse_file(os.path.join(EXAMPLES, name))
    function = get_target(f"cuda:{chip}").emulation().compile(module)
    assert len(function.launch_functions) == len(function.graph.launches) > 2
    assert function.memory_plan["arena_bytes"] <= function.graph.arena_bytes
    arrays = random_inputs(function.inputs, seed=3)
    expected = evaluate(module, arrays)
    for _ in range(2):  # the arena is reused by the next call
        got = function(*arrays)
        got = list(got) if isinstance(got, tuple) else [got]
        for array, reference, spec in zip(got, expected, function.results):
            tolerance = {"bf16": (4e-2, 2e-2), "f16": (1e-2, 2e-3)}.get(spec.dtype, (1e-4, 1e-5))
            assert compare(array, reference, spec.dtype, *tolerance).ok, name
