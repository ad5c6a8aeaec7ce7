"""Pipelines as named stages: editing, running each stage, printing,
failures with located diagnostics; the CPU target and host detection."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir

import lamina
from lamina.diagnostics import CompileError
from lamina.pass_registry import Pass, PassFailure
from lamina.pipeline import Pipeline, Stage, pass_name
from lamina.targets import _REGISTRY, available_targets, get_target, register_target
from lamina.targets.cpu import CPUTarget
from lamina.targets.host import _detect_from_cpuinfo, detect_host

CPU_STAGES = ["nn", "partitioned", "layout", "fused", "linalg", "schedule", "tiled", "bufferized",
              "loops", "llvm-mlir", "llvm", "asm", "obj"]

LINALG_ADD = """
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.add ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""

NN_PROGRAM = """
func.func @main(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
"""


def op_names(module) -> set[str]:
    names = set()

    def visit(op):
        names.add(op.operation.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return names


def test_cpu_stages():
    pipe = Pipeline.for_target("cpu")
    assert pipe.stages == CPU_STAGES
    assert pipe.mlir_stages == CPU_STAGES[:10]
    assert "convert-nn-to-linalg" in [pass_name(p) for p in pipe.stage("linalg").passes]
    text = str(pipe)
    assert "bufferized:" in text and "\n  one-shot-bufferize{" in text
    assert "llc -O2" in text and "-filetype=obj" in text


def test_each_stage_lowers_further():
    module = lamina.parse(NN_PROGRAM)
    pipe = Pipeline.for_target("cpu")
    assert any(n.startswith("nn.") for n in op_names(pipe.run(module, until="nn")))
    names = op_names(pipe.run(module, start="linalg", until="linalg"))
    assert not any(n.startswith("nn.") for n in names) and "linalg.matmul" in names
    function_type = str(pipe.run(module, start="bufferized", until="bufferized")
                        .body.operations[0].attributes["function_type"])
    assert "memref<2x4xf32>" in function_type and "tensor" not in function_type
    assert not any(n.startswith("linalg.") for n in
                   op_names(pipe.run(module, start="loops", until="loops")))
    names = op_names(pipe.run(module, start="llvm-mlir", until="llvm-mlir"))
    assert all(n.startswith("llvm.") or n == "builtin.module" for n in names)


def test_artifact_stages():
    pipe = Pipeline.for_target("cpu")
    llvm_ir = pipe.run(lamina.parse(LINALG_ADD), until="llvm")
    assert "define void @_mlir_ciface_main(" in llvm_ir
    assert "define void @main(" not in llvm_ir  # only the C interface is exported
    asm = pipe.run(lamina.parse(LINALG_ADD), until="asm")
    assert "_mlir_ciface_main:" in asm
    obj = pipe.run(lamina.parse(LINALG_ADD), until="obj")
    assert obj.startswith(b"\x7fELF")
    # A stage reads its input stage's product: obj is compiled from llvm.
    assert pipe.run_stage("obj", llvm_ir).startswith(b"\x7fELF")


def test_editing():
    pipe = Pipeline.for_target("cpu")
    pipe.insert_after("convert-nn-to-linalg", "func.func(cse)")
    passes = [pass_name(p) for p in pipe.stage("linalg").passes]
    assert passes[:2] == ["convert-nn-to-linalg", "cse"]
    pipe.insert_before("bufferized", "symbol-dce")
    assert pass_name(pipe.stage("bufferized").passes[0]) == "symbol-dce"
    pipe.insert_after("loops", "canonicalize")
    assert pass_name(pipe.stage("loops").passes[-1]) == "canonicalize"
    pipe.replace("symbol-dce", "cse")
    assert pass_name(pipe.stage("bufferized").passes[0]) == "cse"
    pipe.remove("cse", stage="bufferized")
    assert pass_name(pipe.stage("bufferized").passes[0]) == "cpu-protect-inputs"
    with pytest.raises(KeyError, match="no pass 'no-such-pass'"):
        pipe.remove("no-such-pass")
    with pytest.raises(KeyError, match="no stage 'vectorised'"):
        pipe.run(lamina.parse(LINALG_ADD), until="vectorised")
    # Copies are independent.
    copy = pipe.copy()
    copy.remove("convert-nn-to-linalg")
    assert "convert-nn-to-linalg" in [pass_name(p) for p in pipe.stage("linalg").passes]


def test_python_passes_run_in_place():
    seen = []

    def count_functions(module):
        seen.append(sum(op.operation.name == "func.func" for op in module.body.operations))

    class MarkFunctions(Pass):
        argument = "test-mark-functions"

        def run(self, op):
            for child in op.regions[0].blocks[0].operations:
                child.operation.attributes["test.marked"] = ir.UnitAttr.get()

    marker = MarkFunctions()
    pipe = Pipeline.for_target("cpu")
    pipe.insert_after("nn", count_functions)
    pipe.insert_after(count_functions, marker)
    module = pipe.run(lamina.parse(LINALG_ADD), until="linalg")
    assert seen == [1]
    assert "test.marked" in str(module)
    pipe.remove(marker)
    pipe.remove("count_functions")
    assert "test.marked" not in str(pipe.run(lamina.parse(LINALG_ADD), until="linalg"))


def test_edited_pipeline_compiles():
    pipe = Pipeline.for_target("cpu")
    pipe.insert_after("convert-nn-to-linalg", "linalg-generalize-named-ops")
    f = lamina.compile(NN_PROGRAM, pipeline=pipe)
    x = np.ones((2, 8), np.float32)
    w = np.full((8, 4), -0.5, np.float32)
    w[:, 0] = 1
    np.testing.assert_array_equal(f(x, w), np.maximum(x @ w, 0))


def test_print_after_all():
    stream = io.StringIO()
    Pipeline.for_target("cpu").run(lamina.parse(LINALG_ADD), until="bufferized",
                                   print_after_all=True, stream=stream)
    text = stream.getvalue()
    assert "// -----// IR Dump After one-shot-bufferize (bufferized) //----- //" in text
    assert "// -----// IR Dump After convert-nn-to-linalg (linalg) //----- //" in text


def test_failing_python_pass_is_located():
    def refuse(module):
        op = module.body.operations[0]
        raise PassFailure("this function is not welcome", op.location)

    pipe = Pipeline.for_target("cpu")
    pipe.insert_after("linalg", refuse)
    with pytest.raises(CompileError) as info:
        pipe.run(lamina.parse(LINALG_ADD), until="loops")
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.filename, diagnostic.line) == ("<string>", 2)
    assert diagnostic.message == "this function is not welcome"
    assert diagnostic.notes[-1].message == "in pass 'refuse' of stage 'linalg'"


def test_failing_upstream_pass_is_reported():
    pipe = Pipeline.for_target("cpu")
    pipe.remove("one-shot-bufferize")
    with pytest.raises(CompileError, match="of stage 'bufferized'"):
        pipe.run(lamina.parse(NN_PROGRAM))


def test_unknown_pass_is_reported():
    pipe = Pipeline.for_target("cpu")
    pipe.insert_after("nn", "no-such-pass")
    with pytest.raises(CompileError, match="unknown pass 'no-such-pass'"):
        pipe.run(lamina.parse(LINALG_ADD))


def test_ops_left_unlowered_are_located():
    pipe = Pipeline.for_target("cpu")
    pipe.remove("convert-to-llvm")
    with pytest.raises(CompileError, match="'func.func' was not lowered to the LLVM dialect"):
        pipe.run(lamina.parse(LINALG_ADD), until="llvm")
    # Translation checks its input too.
    pipe.remove("cpu-check-lowered-to-llvm")
    with pytest.raises(CompileError, match="in pass 'mlir-to-llvmir' of stage 'llvm'"):
        pipe.run(lamina.parse(LINALG_ADD), until="llvm")


def test_stages_of_a_custom_pipeline():
    pipe = Pipeline([Stage("only", ["canonicalize"])])
    module = pipe.run(lamina.parse(LINALG_ADD))
    assert "linalg.add" in str(module)
    with pytest.raises(ValueError, match="stage names repeat"):
        Pipeline([Stage("a"), Stage("a")])


def test_targets():
    assert get_target("cpu").name == "cpu"
    assert isinstance(get_target(get_target("cpu")), CPUTarget)
    other = get_target("cpu:x86-64")
    assert other.cpu == "x86-64" and other.features == () and other.name == "cpu:x86-64"
    assert "-mcpu=x86-64" in " ".join(other.pipeline().stage("obj").passes[0].command())
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        get_target("tpu")
    assert all(os.path.exists(path) for path in get_target("cpu").runtime_libraries())


def test_target_strings_are_checked_against_llvm():
    from lamina.targets.llvm_tools import machine_names
    x86 = machine_names("x86_64")
    assert {"x86-64", "znver4", "skylake-avx512"} <= set(x86.cpus)
    assert {"avx2", "avx512f", "fma"} <= set(x86.features)
    source = ('func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
              '  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
              '  return %0 : tensor<4xf32>\n}\n')
    with pytest.raises(ValueError, match=r"unknown CPU 'bogus' in target 'cpu:bogus' "
                                         r"\(presets: .*neoverse-v2.*; x86-64 CPUs the pinned "
                                         r"LLVM knows: .*znver4.*; AArch64 CPUs the pinned LLVM "
                                         r"knows: .*neoverse-n1"):
        lamina.compile(source, target="cpu:bogus")
    with pytest.raises(ValueError, match="'arm' is an ARM architecture: ARM is not a target"):
        lamina.compile(source, target="cpu:arm")
    with pytest.raises(ValueError, match="unknown CPU 'bogus'"):
        CPUTarget(cpu="bogus")
    with pytest.raises(ValueError, match="unknown CPU feature 'foo'"):
        get_target("cpu:x86-64,+foo")
    with pytest.raises(ValueError, match="must start with '\\+'"):
        CPUTarget(cpu="x86-64", features=("avx2",))
    narrowed = get_target("cpu:x86-64,+avx2,-avx512f,threads=1")
    assert narrowed.features == ("+avx2", "-avx512f") and narrowed.threads == 1
    assert narrowed.vector_bits == 256
    host = get_target(f"cpu:{detect_host().cpu},-avx512f")
    assert "-avx512f" in host.features and "+avx512f" not in host.features


def test_target_registry():
    assert "cpu" in available_targets()

    @register_target("test-kind")
    def make(arch):
        return CPUTarget(cpu=arch)

    try:
        assert "test-kind" in available_targets()
        assert get_target("test-kind:x86-64").cpu == "x86-64"
    finally:
        del _REGISTRY["test-kind"]


def test_targets_are_imported_on_first_use():
    script = ("import sys, lamina\n"
              "assert 'lamina.targets.cpu' not in sys.modules\n"
              "assert lamina.get_target('cpu').kind == 'cpu'\n"
              "assert 'lamina.targets.cpu' in sys.modules\n")
    subprocess.run([sys.executable, "-c", script], check=True)


def test_host_detection():
    host = detect_host()
    assert host.triple.startswith(("x86_64", "aarch64"))
    assert host.cpu
    fallback = _detect_from_cpuinfo()
    assert fallback.triple.endswith("linux-gnu")
    if "avx512f" in open("/proc/cpuinfo").read():
        assert host.has("avx512f") and "+avx512f" in fallback.features


def test_asm_uses_host_features():
    if not detect_host().has("avx512f"):
        pytest.skip("the host has no AVX-512")
    source = """
func.func @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
"""
    assert "zmm" in get_target("cpu").emit(lamina.parse(source), "asm")
    assert "zmm" not in get_target("cpu:x86-64").emit(lamina.parse(source), "asm")


def vectorized_ops(source: str) -> list[str]:
    module = Pipeline.for_target("cpu").run(lamina.parse(source), until="tiled")
    return sorted(n for n in op_names(module) if n.startswith(("vector.", "linalg.")))


def test_tiled_stage_vectorizes_contiguous_loops():
    names = vectorized_ops(NN_PROGRAM.replace("8x4", "8x16").replace("2x4", "2x16"))
    assert "vector.transfer_read" in names and "vector.transfer_write" in names
    assert not any(n.startswith("linalg.") for n in names)


@pytest.mark.parametrize("source", [
    # No vector width divides 10.
    """func.func @main(%a: tensor<3x10xf32>) -> tensor<3x10xf32> {
  %0 = "nn.exp"(%a) : (tensor<3x10xf32>) -> tensor<3x10xf32>
  return %0 : tensor<3x10xf32>
}""",
    # i1 buffers are accessed element by element.
    """func.func @main(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xi1> {
  %0 = "nn.compare"(%a, %b) {predicate = "lt"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  return %0 : tensor<16xi1>
}""",
])
def test_tiled_stage_leaves_other_ops(source):
    names = vectorized_ops(source)
    assert "linalg.generic" in names and "vector.transfer_read" not in names
    f = lamina.compile(source)
    from lamina.reference import evaluate, random_inputs
    args = random_inputs(f.inputs, seed=2)
    np.testing.assert_allclose(f(*args), evaluate(lamina.parse(source), args)[0], rtol=1e-6)


def test_vectorized_and_scalar_code_agree():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "attention.mlir")) as f:
        source = f.read()
    scalar = Pipeline.for_target("cpu")
    scalar.remove("cpu-schedule")
    scalar.remove("cpu-apply-schedule")
    vectorized = lamina.compile(source)
    plain = lamina.compile(source, pipeline=scalar)
    from lamina.reference import random_inputs
    args = random_inputs(vectorized.inputs, seed=1)
    # Vectorised reductions and packed matmuls add in another order
    # (partial sums per lane, k in blocks): equal up to f32 rounding at the
    # output's scale (values of a few tens, some of them cancelling to
    # near zero).
    expected = plain(*args)
    np.testing.assert_allclose(vectorized(*args), expected, rtol=1e-4,
                               atol=1e-5 * float(np.abs(expected).max()))


SHARDED = """shard.grid @grid(shape = 2)
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}
"""


def with_locations(module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


@pytest.mark.parametrize("until", ["linalg", "tiled", "bufferized"])
def test_isolated_stages_give_the_same_ir(until):
    pipe = Pipeline.for_target("cpu")
    in_process = pipe.run(lamina.parse(NN_PROGRAM), until=until)
    isolated = pipe.run(lamina.parse(NN_PROGRAM), until=until, isolate=True)
    assert with_locations(isolated) == with_locations(in_process)
    assert 'loc("<string>":3:8)' in with_locations(isolated)


def test_isolated_stage_runs_python_passes_between_upstream_ones():
    seen = []

    def count_generics(module):
        seen.append(str(module).count("linalg.generic"))

    products = []
    for isolated in (False, True):
        pipe = Pipeline([Stage("linalg", ["convert-nn-to-linalg", "linalg-generalize-named-ops",
                                          count_generics, "canonicalize"], isolated=isolated)])
        products.append(str(pipe.run(lamina.parse(NN_PROGRAM))))
    assert seen == [3, 3]  # fill, matmul, relu: generic before canonicalize
    assert products[0] == products[1] and "nn." not in products[1]
    assert "isolated" in str(pipe) and pipe.copy().stage("linalg").isolated
    with pytest.raises(ValueError, match="only MLIR stages can run isolated"):
        Stage("llvm", kind="llvm", isolated=True)


CONCAT3 = """func.func @main(%x: tensor<1x4xf32>, %y: tensor<2x4xf32>) -> tensor<5x4xf32> {
  %0 = "nn.concat"(%x, %y, %y) {axis = 0 : i64} : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
  %1 = "nn.relu"(%0) : (tensor<5x4xf32>) -> tensor<5x4xf32>
  return %1 : tensor<5x4xf32>
}
"""


def test_isolated_stage_carries_lamina_ops():
    # nn ops (a variadic group of mixed types included) go through mlir-opt
    # and come back verified, locations kept.
    pipe = Pipeline([Stage("nn", ["canonicalize", "cse"], isolated=True)])
    module = pipe.run(lamina.parse(CONCAT3))
    text = with_locations(module)
    assert '"nn.concat"' in text and '"nn.relu"' in text
    assert 'loc("<string>":2:8)' in text


def test_isolated_print_after_all_is_the_same():
    streams = []
    for isolate in (False, True):
        streams.append(io.StringIO())
        Pipeline.for_target("cpu").run(lamina.parse(LINALG_ADD), until="bufferized",
                                       print_after_all=True, stream=streams[-1], isolate=isolate)
    assert streams[0].getvalue() == streams[1].getvalue()


def test_isolated_pass_error_is_located():
    pipe = Pipeline.for_target("cpu").remove("nn-shard-partition")
    with pytest.raises(CompileError) as info:
        pipe.run(lamina.parse(SHARDED), isolate=True)
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.filename, diagnostic.line, diagnostic.col) == ("<string>", 4, 8)
    assert diagnostic.message == "op was not bufferized"
    assert [n.message for n in diagnostic.notes] == [
        "in pass 'one-shot-bufferize' of stage 'bufferized'"]


def test_isolated_abort_is_a_located_error():
    pipe = Pipeline([Stage("gpu", ["canonicalize", "nvvm-attach-target{O=99}"], isolated=True)])
    with pytest.raises(CompileError) as info:
        pipe.run(lamina.parse(LINALG_ADD))
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.filename, diagnostic.line, diagnostic.col) == ("<string>", 1, 1)
    assert diagnostic.message.startswith(
        "upstream pass 'nvvm-attach-target{O=99}' aborted (signal 6) in stage 'gpu'")
    assert "must be a number between 0 and 3" in diagnostic.notes[0].message
