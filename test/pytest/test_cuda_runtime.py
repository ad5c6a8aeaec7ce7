"""The CUDA runtime's parts that need no GPU: the kernel manifest, the host
program, the kernel parameters (checked against the PTX entries' own
parameter lists), the TMA descriptors' parameters and the choice of image.
Running the kernels is tested under the lit feature `cuda-gpu`."""

import ctypes

import pytest

import lamina
from lamina.cuda_runtime import (Constant, CUDAError, GPUProgram, HostProgram,
                                 Launch,
                                 PackedParameters,
                                 TensorMapSpec, View, choose_image, entry_parameter_counts,
                                 launch_parameters, parse_manifest, tensor_map_parameters)
from lamina.targets.nvidia import ARCHITECTURES, BankSwizzle
from lamina.targets import get_target
from lamina.targets.cuda import occupancy
from lamina.types import MemRefType

# Two matmuls, the second reading the first's result: a [1, N] bias seen
# as [N] (a view), a residual, two results.
CHAIN = """
func.func @main(%a: tensor<64x96xf16>, %b: tensor<96x80xf16>, %bias: tensor<1x80xf16>,
                %c: tensor<80x32xf16>, %r: tensor<64x32xf16>)
    -> (tensor<64x32xf16>, tensor<64x80xf16>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x96xf16>, tensor<96x80xf16>) -> tensor<64x80xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<64x80xf16>, tensor<1x80xf16>) -> tensor<64x80xf16>
  %2 = "nn.matmul"(%1, %c) : (tensor<64x80xf16>, tensor<80x32xf16>) -> tensor<64x32xf16>
  %3 = "nn.add"(%2, %r) : (tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  return %3, %1 : tensor<64x32xf16>, tensor<64x80xf16>
}
"""


@pytest.fixture(scope="module", params=["sm_80", "sm_90a"])
def program(request):
    return get_target(f"cuda:{request.param}").build(lamina.parse(CHAIN))


def test_host_program(program):
    host = program.host
    assert [str(t) for t in host.parameters] == [
        "memref<64x96xf16>", "memref<96x80xf16>", "memref<1x80xf16>", "memref<80x32xf16>",
        "memref<64x32xf16>", "memref<64x32xf16>", "memref<64x80xf16>"]
    view, first, second = host.steps
    assert view == View(7, 2, MemRefType((80,), "f16"))
    # The first kernel writes the second result (value 6), which the second reads.
    assert first.kernel == "main_matmul_0" and first.arguments == (0, 1, 7, 6)
    assert second.kernel == "main_matmul_1" and second.arguments == (6, 3, 4, 5)
    assert first.block == (128, 1, 1) and first.grid[2] == 1


def test_manifest(program):
    kernels = program.kernels
    assert set(kernels) == {"main_matmul_0", "main_matmul_1"}
    spec = kernels["main_matmul_0"]
    assert spec.block == (128, 1, 1) and spec.dynamic_shared_memory > 0
    if program.chip == "sm_90a":
        assert spec.tensor_maps == (TensorMapSpec(0, (64, 64), "f16", 128),
                                    TensorMapSpec(1, (64, 64), "f16", 128))
    else:
        assert spec.tensor_maps == ()


def test_parameters_match_ptx_entries(program):
    """Each launch packs exactly the parameters its PTX entry declares,
    memref descriptors field by field."""
    counts = entry_parameter_counts(program.ptx)
    host = program.host
    addresses = [0x7f0000000000 + 0x100000 * i for i in range(host.values)]
    types = list(host.parameters) + [None] * (host.values - len(host.parameters))
    for step in host.steps:
        if isinstance(step, View):
            types[step.result], addresses[step.result] = step.type, addresses[step.source]
    for launch in host.launches:
        values = launch_parameters(launch, types, addresses)
        tensor_maps = len(program.kernels[launch.kernel].tensor_maps)
        assert len(values) + tensor_maps == counts[launch.kernel]
    values = launch_parameters(host.launches[0], types, addresses)
    assert [v.value for v in values[:7]] == [addresses[0], addresses[0], 0, 64, 96, 96, 1]
    assert [v.value for v in values[14:19]] == [addresses[2], addresses[2], 0, 80, 1]


def test_scalar_parameters():
    launch = Launch("k", (1, 1, 1), (32, 1, 1), (0, 1))
    values = launch_parameters(launch, [Constant(0, "index", 7), Constant(1, "f32", 0.5)],
                               [None, None])
    assert [type(v) for v in values] == [ctypes.c_int64, ctypes.c_float]
    assert [v.value for v in values] == [7, 0.5]


def test_packed_parameters_point_at_values():
    values = [ctypes.c_uint64(0xdead0000), ctypes.c_int64(-3), ctypes.c_float(2.5)]
    packed = PackedParameters(values)
    pointers = (ctypes.c_void_p * 3).from_address(packed.address)
    assert ctypes.c_uint64.from_address(pointers[0]).value == 0xdead0000
    assert ctypes.c_int64.from_address(pointers[1]).value == -3
    assert ctypes.c_float.from_address(pointers[2]).value == 2.5


def test_tensor_map_parameters():
    p = tensor_map_parameters(MemRefType((200, 136), "f16"), TensorMapSpec(1, (64, 64), "f16", 128))
    assert p.data_type == "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"
    assert p.rank == 2
    assert p.global_dim == (136, 200)          # innermost first
    assert p.global_strides == (272,)          # bytes, all dims but the innermost
    assert p.box_dim == (64, 64)
    assert p.element_strides == (1, 1)
    assert p.swizzle == "CU_TENSOR_MAP_SWIZZLE_128B"
    p = tensor_map_parameters(MemRefType((3, 40, 24), "bf16"), TensorMapSpec(0, (1, 16, 8), "bf16", 0))
    assert (p.data_type, p.global_dim, p.global_strides, p.box_dim, p.swizzle) == (
        "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", (24, 40, 3), (48, 1920), (8, 16, 1),
        "CU_TENSOR_MAP_SWIZZLE_NONE")


@pytest.mark.parametrize("memref, spec, message", [
    (MemRefType((200, 100), "f16"), TensorMapSpec(0, (64, 64), "f16", 128), "refuses"),
    (MemRefType((64, 256), "f16"), TensorMapSpec(0, (64, 128), "f16", 128), "refuses"),
    (MemRefType((64, 256), "f16"), TensorMapSpec(0, (300, 64), "f16", 0), "refuses"),
    (MemRefType((64, 256), "f32"), TensorMapSpec(0, (64, 32), "f16", 128), "f16 boxes"),
])
def test_tensor_map_refusals(memref, spec, message):
    with pytest.raises(CUDAError, match=message):
        tensor_map_parameters(memref, spec)


def test_enum_names_are_the_drivers():
    driver = pytest.importorskip("cuda.bindings.driver")
    p = tensor_map_parameters(MemRefType((64, 64), "bf16"), TensorMapSpec(0, (64, 64), "bf16", 128))
    assert getattr(driver.CUtensorMapDataType, p.data_type)
    assert getattr(driver.CUtensorMapSwizzle, p.swizzle)


def test_choose_image():
    assert choose_image("sm_90a", True, (9, 0), "H200") == "cubin"
    assert choose_image("sm_80", False, (8, 0), "A100") == "cubin"
    assert choose_image("sm_80", False, (9, 0), "H200") == "ptx"
    assert choose_image("sm_80", False, (8, 6), "A10") == "ptx"
    for chip, specific, capability in (("sm_90a", True, (8, 0)), ("sm_90a", True, (10, 0)),
                                       ("sm_80", False, (7, 5))):
        with pytest.raises(CUDAError, match="cannot run code for"):
            choose_image(chip, specific, capability, "some GPU")


def test_malformed_manifest():
    with pytest.raises(CUDAError, match="malformed kernel manifest"):
        parse_manifest('{"launches": [{"kernel": "k"}]}')


def test_host_program_refuses_other_host_code():
    module = lamina.parse("""
func.func @main(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c0] : memref<4xf32>
  return
}""")
    with pytest.raises(lamina.CompileError, match="'memref.store' cannot run in the host code"):
        HostProgram.from_module(module, "main")


@pytest.mark.parametrize("arch, registers, threads, shared, blocks, limit", [
    # 231 registers: 29 units of 256 per warp, 8 warps of 65536 registers.
    ("sm_80", 231, 128, 64 * 1024 + 1, 2, "registers"),
    ("sm_90a", 154, 128, 128 * 1024 + 40, 1, "shared memory"),
    ("sm_80", 16, 128, 0, 16, "threads"),
    ("sm_90a", 16, 32, 0, 32, "blocks"),
    ("sm_80", 255, 1024, 0, 0, "registers"),
])
def test_occupancy(arch, registers, threads, shared, blocks, limit):
    assert occupancy(ARCHITECTURES[arch], registers, threads, shared) == {
        "blocks_per_sm": blocks, "limited_by": limit}


def test_saved_program_loads_as_it_was(program, tmp_path):
    path = str(tmp_path / "program.json")
    program.save(path)
    loaded = GPUProgram.load(path)
    assert loaded.module is None
    for field in ("name", "inputs", "results", "kernels", "ptx", "cubin", "chip", "specific",
                  "manifest"):
        assert getattr(loaded, field) == getattr(program, field), field
    assert loaded.host == program.host
    assert [type(step).__name__ for step in loaded.host.steps] == ["View", "Launch", "Launch"]
    if program.chip == "sm_90a":
        assert all(spec.tensor_maps for spec in loaded.kernels.values())


def test_loading_what_is_not_a_program(tmp_path):
    with pytest.raises(CUDAError, match="cannot read the GPU program .*missing.json"):
        GPUProgram.load(str(tmp_path / "missing.json"))
    (tmp_path / "other.json").write_text('{"launches": []}')
    with pytest.raises(CUDAError, match="is not a GPU program Lamina saved: format None"):
        GPUProgram.load(str(tmp_path / "other.json"))


@pytest.mark.parametrize("row_bytes", [32, 64, 96, 128, 192, 256, 400])
def test_bank_swizzle_permutes_chunks_within_rows_and_spreads_banks(row_bytes):
    """A swizzled row holds each of its chunks once; the eight rows one
    ldmatrix matrix reads at one column are in eight different 16-byte
    bank groups wherever the period allows it."""
    swizzle = BankSwizzle.for_rows(row_bytes)
    chunks = row_bytes // 16
    if swizzle is None:
        assert chunks % 2
        return
    for row in range(64):
        assert sorted(swizzle.chunk(row, c) for c in range(chunks)) == list(range(chunks))
    for first in range(0, 64, 8):
        for chunk in range(chunks):
            rows = range(first, first + 8)
            plain = {(row * row_bytes // 16 + chunk) % 8 for row in rows}
            swizzled = {(row * row_bytes // 16 + swizzle.chunk(row, chunk)) % 8 for row in rows}
            assert len(swizzled) >= len(plain)
            if row_bytes in (32, 64, 128, 256):
                assert len(swizzled) == 8


def test_matmul_tiles_are_bank_swizzled_on_sm_80():
    ptx = get_target("cuda:sm_80").build(lamina.parse(CHAIN)).ptx
    assert "ldmatrix" in ptx and "cp.async" in ptx and "xor.b" in ptx
