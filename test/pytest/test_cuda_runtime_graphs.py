"""The CUDA runtime's own logic against a recording fake of the driver
(no GPU): the arena and staging buffers are allocated once at load, a
call copies only its inputs and outputs, the launches of the launch
graph get their parameters at the arena's and the buffers' addresses,
the first call on an address set captures a CUDA graph and the next ones
replay it, new addresses capture again, a capture the driver refuses
falls back to launching one by one, and `graphs=False` or
LAMINA_CUDA_GRAPHS=0 launch one by one from the start."""

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import lamina
from lamina.cuda_runtime import (ARENA, CUDAError, CUDAFunction,
                                 entry_parameter_counts)
from lamina.dlpack import CUDA, DLPackBuffer
from lamina.targets import get_target

# Three matmuls and a softmax: a [1, N] bias seen as [N] (a view), two
# intermediates in the arena, two results.
CHAIN = """
func.func @main(%a: tensor<64x96xf16>, %b: tensor<96x80xf16>, %bias: tensor<1x80xf16>,
                %c: tensor<80x32xf16>, %r: tensor<32x32xf16>)
    -> (tensor<64x32xf16>, tensor<64x32xf16>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x96xf16>, tensor<96x80xf16>) -> tensor<64x80xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<64x80xf16>, tensor<1x80xf16>) -> tensor<64x80xf16>
  %2 = "nn.matmul"(%1, %c) : (tensor<64x80xf16>, tensor<80x32xf16>) -> tensor<64x32xf16>
  %3 = "nn.softmax"(%2) {axis = -1 : i64} : (tensor<64x32xf16>) -> tensor<64x32xf16>
  %4 = "nn.matmul"(%3, %r) : (tensor<64x32xf16>, tensor<32x32xf16>) -> tensor<64x32xf16>
  return %4, %3 : tensor<64x32xf16>, tensor<64x32xf16>
}
"""


class RecordingDriver:
    """The driver calls the runtime makes, recorded: device memory is host
    memory, copies are memmoves, launches are recorded (on the stream, or
    into the graph being captured), graphs are lists of launches. It can
    refuse a call (`refuse`), as a driver refuses a capture."""

    def __init__(self, refuse=()):
        self.calls: list[tuple] = []
        self.buffers: dict[int, np.ndarray] = {}
        self.tensor_maps: dict[int, tuple] = {}
        self.freed: list[int] = []
        self.refuse = set(refuse)
        self.capturing: list | None = None
        self.graphs: dict[int, list] = {}
        self.capability, self.name, self.shared_memory_optin = (9, 0), "fake H100", 232448
        self.cuda = SimpleNamespace(
            CUfunction_attribute=SimpleNamespace(
                CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES="static shared",
                CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK="threads",
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="dynamic shared"),
            CUstreamCaptureMode=SimpleNamespace(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL="local"),
            CUevent_flags=SimpleNamespace(CU_EVENT_DISABLE_TIMING="no timing"),
            CUstream=lambda handle: ("CUstream", handle))

    def allocate(self, size):
        buffer = np.zeros(max(size, 1), np.uint8)
        self.buffers[buffer.ctypes.data] = buffer
        self.calls.append(("cuMemAlloc", size))
        return buffer.ctypes.data

    def free(self, address):
        self.freed.append(address)

    def tensor_map(self, address, parameters):
        device_copy = self.allocate(128)
        self.tensor_maps[device_copy] = (address, parameters)
        return device_copy

    def names(self, start=0):
        return [c[0] for c in self.calls[start:]]

    def call(self, name, *args):
        self.calls.append((name,) + args)
        if name in self.refuse:
            raise CUDAError(f"{name} failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")
        if name in ("cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync"):
            ctypes.memmove(args[0], args[1], args[2])
        elif name == "cuLaunchKernel" and self.capturing is not None:
            self.capturing.append(args)
        elif name == "cuStreamBeginCapture":
            self.capturing = []
        elif name == "cuStreamEndCapture":
            graph, self.capturing = self.capturing, None
            self.graphs[id(graph)] = graph
            return id(graph)
        elif name == "cuGraphInstantiate":
            return ("executable", args[0])
        elif name == "cuModuleGetFunction":
            return args[1].decode()
        elif name == "cuFuncGetAttribute":
            return 1024 if args[0] == "threads" else 0
        elif name == "cuStreamCreate":
            return "stream"
        elif name == "cuEventCreate":
            return "event"
        elif name == "cuModuleLoadData":
            return "module"
        return None


@pytest.fixture(scope="module")
def program():
    return get_target("cuda:sm_90a").build(lamina.parse(CHAIN))


def arguments(program, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, t.shape).astype(np.float16) for t in program.inputs]


def test_load_allocates_the_arena_and_staging_buffers_once(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    graph = function.graph
    assert graph.arena_bytes >= function.memory_plan["arena_bytes"] > 0
    sizes = [c[1] for c in gpu.calls if c[0] == "cuMemAlloc"]
    assert sizes == [graph.arena_bytes] + [a.nbytes for a in arguments(program)] + [
        int(np.prod(t.shape)) * 2 for t in program.results]
    assert [c[0] for c in gpu.calls if c[0] == "cuStreamCreate"] == ["cuStreamCreate"]


def test_a_call_copies_only_inputs_and_outputs_and_replays_its_graph(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    assert function.graphs
    arrays = arguments(program)
    start = len(gpu.calls)
    function(*arrays)
    first = gpu.names(start)
    launches = len(function.graph.launches)
    assert first.count("cuMemcpyHtoDAsync") == len(program.inputs)
    assert first.count("cuMemcpyDtoHAsync") == len(program.results)
    # The first call captures its launches and launches the graph.
    capture = first[first.index("cuStreamBeginCapture"):first.index("cuStreamEndCapture") + 1]
    assert capture.count("cuLaunchKernel") == launches
    assert first[first.index("cuStreamEndCapture") + 1:][:3] == [
        "cuGraphInstantiate", "cuGraphDestroy", "cuGraphLaunch"]
    # Tensor maps (sm_90a's TMA descriptors) are made once, at the first call.
    maps = sum(1 for c in gpu.calls[start:] if c[0] == "cuMemAlloc")
    assert maps == sum(len(c.tensor_maps) for c in function.graph.launches) > 0
    start = len(gpu.calls)
    function(*arguments(program, seed=1))
    again = gpu.names(start)
    assert again == (["cuMemcpyHtoDAsync"] * len(program.inputs) + ["cuGraphLaunch"]
                     + ["cuMemcpyDtoHAsync"] * len(program.results) + ["cuStreamSynchronize"])


def test_launch_parameters_point_into_the_arena_and_the_buffers(program):
    gpu = RecordingDriver(refuse={"cuStreamBeginCapture"})
    function = CUDAFunction(program, gpu=gpu)
    arrays = arguments(program)
    function(*arrays)
    launched = [c for c in gpu.calls if c[0] == "cuLaunchKernel"]
    assert [c[1] for c in launched] == [c.kernel for c in function.graph.launches]
    counts = entry_parameter_counts(program.ptx)
    staging = function._staging

    def address(slot):
        if slot.region == ARENA:
            return function.arena + slot.offset
        first = len(program.inputs) if slot.region == "output" else 0
        return staging[first + slot.index] + slot.offset

    for call, launch in zip(launched, function.graph.launches):
        assert call[2:8] == launch.grid + launch.block and call[8] == launch.shared_bytes
        assert call[9] == "stream"
        pointers = (ctypes.c_void_p * counts[launch.kernel]).from_address(call[10])
        values = [ctypes.c_uint64.from_address(p).value for p in pointers]
        position = 0
        for slot in launch.arguments:
            assert values[position] == address(slot)
            position += 3 + 2 * slot.type.rank
        for spec, tensor_map in zip(launch.tensor_maps, values[position:]):
            assert gpu.tensor_maps[tensor_map][0] == address(launch.arguments[spec.argument])
    # The inputs reached their staging buffers.
    for array, address in zip(arrays, staging):
        assert (gpu.buffers[address][:array.nbytes].view(np.float16).reshape(array.shape)
                == array).all()


def test_new_addresses_capture_again_and_old_ones_replay(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    inputs = len(program.inputs) + len(program.results)
    first = tuple(gpu.allocate(64 * 1024) for _ in range(inputs))
    second = tuple(gpu.allocate(64 * 1024) for _ in range(inputs))
    for addresses in (first, second, first, second):
        function.prepared(addresses).run("stream", function.graphs)
    names = [n for n in gpu.names() if n in ("cuStreamBeginCapture", "cuGraphLaunch")]
    assert names == ["cuStreamBeginCapture", "cuGraphLaunch", "cuStreamBeginCapture",
                     "cuGraphLaunch", "cuGraphLaunch", "cuGraphLaunch"]
    assert len(gpu.graphs) == 2


@pytest.mark.parametrize("refused", ["cuStreamBeginCapture", "cuGraphInstantiate"])
def test_a_refused_capture_falls_back_to_launching_one_by_one(program, refused):
    gpu = RecordingDriver(refuse={refused})
    function = CUDAFunction(program, gpu=gpu)
    arrays = arguments(program)
    function(*arrays)
    start = len(gpu.calls)
    function(*arrays)
    names = gpu.names(start)
    assert "cuStreamBeginCapture" not in names and "cuGraphLaunch" not in names
    assert names.count("cuLaunchKernel") == len(function.graph.launches)
    if refused == "cuGraphInstantiate":
        # The capture was ended and its graph destroyed.
        assert gpu.names().count("cuStreamEndCapture") == 1
        assert gpu.names().count("cuGraphDestroy") == 1


@pytest.mark.parametrize("how", ["option", "environment"])
def test_graphs_can_be_turned_off(program, how, monkeypatch):
    gpu = RecordingDriver()
    if how == "option":
        function = CUDAFunction(program, gpu=gpu, graphs=False)
    else:
        monkeypatch.setenv("LAMINA_CUDA_GRAPHS", "0")
        function = CUDAFunction(program, gpu=gpu)
    assert not function.graphs
    for _ in range(2):
        function(*arguments(program))
    names = gpu.names()
    assert "cuStreamBeginCapture" not in names and "cuGraphLaunch" not in names
    assert names.count("cuLaunchKernel") == 2 * len(function.graph.launches)


def test_graphs_option_of_compile_is_for_cuda_targets():
    with pytest.raises(ValueError, match="graphs= is for cuda targets, not 'cpu"):
        lamina.compile(CHAIN, target="cpu", graphs=False)


def device_tensors(gpu, program, seed=0):
    """The program's inputs as DLPack tensors in the fake device's memory."""
    tensors = []
    for array, spec in zip(arguments(program, seed), program.inputs):
        address = gpu.allocate(array.nbytes)
        gpu.buffers[address][:array.nbytes] = array.view(np.uint8).reshape(-1)
        tensors.append(DLPackBuffer(address, (CUDA, 0), spec.dtype, spec.shape, gpu))
    return tensors


def test_device_tensors_are_used_in_place_and_results_stay_on_the_device(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    inputs = device_tensors(gpu, program)
    start = len(gpu.calls)
    results = function(*inputs)
    names = gpu.names(start)
    assert "cuMemcpyHtoDAsync" not in names and "cuMemcpyDtoHAsync" not in names
    assert "cuStreamSynchronize" not in names  # the call is left running on the stream
    assert all(r.device == (CUDA, 0) for r in results)
    assert [(r.dtype, r.shape) for r in results] == [(t.dtype, t.shape) for t in program.results]
    captured = gpu.graphs[next(iter(gpu.graphs))]
    first = next(c for c in captured if c[0] == function.graph.launches[0].kernel)
    pointers = ctypes.c_void_p.from_address(first[9])  # A, the first parameter
    assert ctypes.c_uint64.from_address(pointers.value).value == inputs[0].pointer
    addresses = [r.pointer for r in results]
    del results
    # The results' memory went back to the pool: the next call takes the
    # same addresses and replays the graph captured by the first.
    start = len(gpu.calls)
    again = function(*inputs)
    assert [r.pointer for r in again] == addresses
    assert gpu.names(start) == ["cuGraphLaunch"]


def test_host_tensors_given_to_a_cuda_function_are_copied_in_and_out(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    tensors = [torch.from_numpy(a) for a in arguments(program)]
    start = len(gpu.calls)
    results = function(*tensors)
    assert all(isinstance(r, torch.Tensor) and r.device.type == "cpu" for r in results)
    names = gpu.names(start)
    assert names.count("cuMemcpyHtoDAsync") == len(program.inputs)
    assert names.count("cuMemcpyDtoHAsync") == len(program.results)


def test_a_tensor_on_another_gpu_is_refused(program):
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    inputs = device_tensors(gpu, program)
    inputs[1] = DLPackBuffer(inputs[1].pointer, (CUDA, 1), inputs[1].dtype, inputs[1].shape, gpu)
    with pytest.raises(ValueError, match="argument #1: a tensor on cuda:1; this function runs "
                                         "on cuda:0"):
        function(*inputs)


def test_a_consumer_stream_waits_for_the_results(program):
    """A DLPack consumer that names its stream (as torch.from_dlpack does)
    gets it made to wait for the function's stream."""
    gpu = RecordingDriver()
    function = CUDAFunction(program, gpu=gpu)
    results = function(*device_tensors(gpu, program))
    start = len(gpu.calls)
    results[0].__dlpack__(stream=7)
    assert gpu.calls[start:] == [
        ("cuEventCreate", "no timing"), ("cuEventRecord", "event", "stream"),
        ("cuStreamWaitEvent", ("CUstream", 7), "event", 0), ("cuEventDestroy", "event")]
