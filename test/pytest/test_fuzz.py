"""The fuzzer's own logic: the generator (every op family and attribute,
valid programs, the shapes and element types it promises, operands kept
where ops are well-conditioned), the checker's verdicts and tolerances,
the child processes, the reducer, the mutation rules and the command line.

The fixed corpus that CI runs through the compiler is test_fuzz_corpus.py.
"""

from __future__ import annotations

import faulthandler
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lamina.dialects.opdef import lookup_op
from lamina.fuzz import (FLOATS, NOT_GENERATED, RULES, Dim, Invalid, Program, TypeInfo,
                         generate_program)
from lamina.fuzz_check import (Configuration, Verdict, check_program, compare_results,
                               identical, tolerances)
from lamina.fuzz_mutate import ToolRun, check_tool_run, mutate
from lamina.fuzz_reduce import case_text, reduce_program, run_line
from lamina.fuzz_sandbox import exception_of, reports_of, result_of, run_child, run_children

SEEDS = range(400)


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    return [generate_program(seed) for seed in SEEDS]


def nn_ops() -> list[str]:
    from lamina.context import lookup_dialect
    return sorted(f"nn.{name}" for name in lookup_dialect("nn").ops)


# ---------------------------------------------------------------------------
# The generator.


def test_same_seed_same_program():
    assert generate_program(17).text() == generate_program(17).text()
    assert generate_program(17).text() != generate_program(18).text()


def test_every_nn_op_is_generated(programs):
    generated = Counter(op.kind for p in programs for op in p.ops)
    missing = [op for op in nn_ops() if op not in generated and op not in NOT_GENERATED]
    assert not missing, f"the generator never makes {missing}: add them to lamina.fuzz"
    unknown = [op for op in nn_ops() if op not in RULES and op not in NOT_GENERATED]
    assert not unknown


def test_every_attribute_is_generated(programs):
    seen: dict[str, set] = {}
    for p in programs:
        for op in p.ops:
            seen.setdefault(op.kind, set()).update(op.attrs)
    for kind in nn_ops():
        if kind in NOT_GENERATED:
            continue
        declared = {decl.name for decl in lookup_op(kind).attr_decls}
        assert declared <= seen.get(kind, set()), (kind, declared - seen.get(kind, set()))


def test_every_optional_operand_is_generated(programs):
    counts = Counter((op.kind, len(op.operands)) for p in programs for op in p.ops)
    for kind, decls in ((k, lookup_op(k).operand_decls) for k in nn_ops()
                        if k not in NOT_GENERATED):
        if any(d.kind == "optional" for d in decls):
            singles = sum(1 for d in decls if d.kind == "single")
            assert counts[(kind, singles)] and counts[(kind, singles + 1)], kind
    assert counts[("nn.concat", 3)] and counts[("nn.concat", 2)]


def test_programs_verify(programs):
    """Shapes are chosen before ops: Lamina's verifier accepts every program."""
    from lamina.parsing import parse_source
    for p in programs:
        parse_source(p.text(), f"program {p.seed}")


def test_shapes_element_types_and_structure(programs):
    sizes = Counter(d.size for p in programs for t in p.types().values() for d in t.shape)
    assert sizes[1] and sizes[2] and all(sizes[s] for s in (3, 5, 7, 11, 13, 17, 31))
    assert any(sizes[s] for s in (33, 65)), "sizes no tile or vector width divides"
    assert {d for p in programs for _, d in p.inputs.values()} >= set(FLOATS)
    assert Counter(len(p.outputs) for p in programs)[1] < len(programs) / 2
    multi_use = broadcasting = rank_zero = 0
    for p in programs:
        uses = Counter(o for op in p.ops for o in op.operands)
        multi_use += any(n >= 2 for n in uses.values())
        types = p.types()
        broadcasting += any(op.kind in ("nn.add", "nn.mul", "nn.sub", "nn.div") and
                            len({tuple(d.size for d in types[o].shape) for o in op.operands}) > 1
                            for op in p.ops)
        rank_zero += any(not t.shape for t in types.values())
    assert multi_use > len(programs) / 4 and broadcasting > len(programs) / 10 and rank_zero


def test_operands_stay_where_ops_are_well_conditioned(programs):
    """Run in float64 on the inputs lamina-run --random gives (in [-1, 1)):
    log, sqrt and rsqrt see operands >= 0.25, divisors are >= 0.5, pow's
    base is positive and its exponent small, exp's operand is at most 4,
    and f16 values stay finite."""
    from lamina.fuzz_check import program_inputs
    from lamina.parsing import parse_source
    from lamina.reference import Interpreter
    checked = Counter()
    for p in programs[:150]:
        values = dict(zip(p.inputs, program_inputs(p, p.seed)))
        ops = iter(p.ops)

        def observe(op, arrays, ops=ops, values=values):
            for name, array in zip(next(ops).results, arrays):
                values[name] = array

        Interpreter(parse_source(p.text(), "p"), "f64", observe).call(
            "main", [values[n] for n in p.inputs])
        for op in p.ops:
            operands = [np.asarray(values[o], np.float64) for o in op.operands]
            if op.kind in ("nn.log", "nn.sqrt", "nn.rsqrt"):
                assert operands[0].min(initial=1) >= 0.25, (p.seed, op)
            elif op.kind == "nn.div":
                assert operands[1].min(initial=1) >= 0.5, (p.seed, op)
            elif op.kind == "nn.pow":
                assert operands[0].min(initial=1) >= 0.25 and \
                    np.abs(operands[1]).max(initial=0) <= 2, (p.seed, op)
            elif op.kind == "nn.exp":
                assert operands[0].max(initial=0) <= 4, (p.seed, op)
            else:
                continue
            checked[op.kind] += 1
        types = p.types()
        for name, t in types.items():
            if t.dtype == "f16":
                assert np.all(np.abs(np.asarray(values[name], np.float64)) < 6e4), (p.seed, name)
    assert len(checked) == 6


def test_normalisations_in_half_precision_have_a_large_epsilon(programs):
    """A normalisation amplifies its input's rounding by up to 1/sqrt(epsilon):
    lamina-fuzz --program 2006068 (a bf16 layer_norm over a softmax of two
    nearly equal values, default epsilon) differed from the float64
    reference by 3.6 times the tolerance while matching the bf16 reference
    exactly."""
    types_of = {p.seed: p.types() for p in programs}
    count = 0
    for p in programs:
        for op in p.ops:
            if op.kind in ("nn.layer_norm", "nn.rms_norm") and \
                    types_of[p.seed][op.operands[0]].dtype != "f32":
                assert op.attrs.get("epsilon", 1e-5) >= 0.1, (p.seed, op)
                count += 1
    assert count


def test_type_rules_reject_what_the_verifier_rejects():
    f32 = lambda *s: TypeInfo(tuple(Dim(n) for n in s), "f32")  # noqa: E731
    with pytest.raises(Invalid):
        RULES["nn.matmul"]([f32(2, 3), f32(4, 5)], {}, {}, {})
    with pytest.raises(Invalid):
        RULES["nn.add"]([f32(2, 3), f32(4)], {}, {}, {})
    assert RULES["nn.add"]([f32(2, 1), f32(4)], {}, {}, {})[0].shape == (Dim(2), Dim(4))
    with pytest.raises(Invalid):
        RULES["nn.max_pool2d"]([f32(1, 1, 4, 4)], {"kernel": (2, 2), "padding": (2, 0, 0, 0)},
                               {}, {})


def test_programs_round_trip_through_json(programs):
    for p in programs[:50]:
        assert Program.from_json(p.to_json()).text() == p.text()


# ---------------------------------------------------------------------------
# The checker.


def _program(body: str = "nn.relu") -> Program:
    return Program({"a": (("s0",), "f32")}, [_op(body, ["a"], ["r"])], ["r"], {"s0": 5}, seed=3)


def _op(kind, operands, results, **attrs):
    from lamina.fuzz import Op
    return Op(kind, operands, results, attrs)


def test_tolerances_follow_precision_reductions_and_magnitudes():
    exact = _program()
    loose = Program({"a": (("s0", "s1"), "f16"), "b": (("s1", "s2"), "f16")},
                    [_op("nn.matmul", ["a", "b"], ["r"])], ["r"], {"s0": 2, "s1": 256, "s2": 3})
    t32 = tolerances(exact, {"a": 1.0, "r": 1.0})[0]
    t16 = tolerances(loose, {"a": 1.0, "b": 1.0, "r": 50.0})[0]
    assert t32.dtype == "f32" and t16.dtype == "f16"
    assert t16.rtol > 4 * t32.rtol * 10  # f16, and 256 terms
    assert t16.scale == 50.0


def test_compare_results_and_identical():
    limit = tolerances(_program(), {"r": 1.0})
    good = [np.linspace(0, 1, 5)]
    assert compare_results([good[0] + 1e-6], good, limit) is None
    index, comparison = compare_results([good[0] + 0.1], good, limit)
    assert index == 0 and not comparison.ok
    assert identical([np.array([np.nan, 1.0])], [np.array([np.nan, 1.0])]) is None
    assert identical([np.array([0.0, 1.0])], [np.array([0.0, 1.0 + 1e-12])]) == 0


def test_check_program_finds_wrong_results_and_failures():
    program = generate_program(5)
    wrong = Configuration("wrong", lambda text, inputs: [np.zeros((1,))] * 9)

    def failing(text, inputs):
        raise RuntimeError("boom")

    verdicts = check_program(program, 0, [wrong, Configuration("failing", failing)])
    kinds = {(v.kind, v.configuration) for v in verdicts}
    assert ("mismatch", "wrong") in kinds and ("error", "failing") in kinds
    assert check_program(program, 0, []) == [Verdict("ok")]


def test_a_program_a_configuration_does_not_cover_is_unsupported_not_a_finding():
    """An error that the configuration's `unsupported` recognises is an
    `unsupported` verdict with its reason; any other error stays a finding."""
    from lamina.diagnostics import CompileError, Diagnostic
    from lamina.fuzz_check import not_lowered
    program = generate_program(5)

    def uncovered(text, inputs):
        raise CompileError([Diagnostic("<fuzz>", 3, 8, "error",
                                       "'nn.layer_norm' is not lowered to hw kernels: ...")])

    def broken(text, inputs):
        raise CompileError([Diagnostic("<fuzz>", 3, 8, "error", "something else")])

    verdicts = check_program(program, 0, [Configuration("gpu", uncovered,
                                                        unsupported=not_lowered)])
    assert verdicts == [Verdict("unsupported", "gpu", "'nn.layer_norm' not lowered"),
                        Verdict("ok")]
    assert not any(v.failed for v in verdicts)
    verdicts = check_program(program, 0, [Configuration("gpu", broken, unsupported=not_lowered)])
    assert [(v.kind, v.failed) for v in verdicts] == [("error", True)]
    assert not_lowered("x.mlir:1:2: error: 'nn.pad' is not lowered to hw kernels") == \
        "'nn.pad' not lowered"
    assert not_lowered("'nn.pad' op failed") is None


def test_cuda_emulate_runs_what_the_gpu_targets_lower():
    """The cuda-emulate configuration on a program the GPU pipeline lowers
    (an f16 matmul) matches the reference; on one with an op it does not
    lower, the verdict is unsupported."""
    from lamina.fuzz_check import configurations
    (emulate,) = configurations(["cuda-emulate"])
    matmul = """func.func @main(%a: tensor<32x16xf16>, %b: tensor<16x24xf16>) -> tensor<32x24xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<32x16xf16>, tensor<16x24xf16>) -> tensor<32x24xf16>
  return %0 : tensor<32x24xf16>
}"""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 24)).astype(np.float16)
    (result,) = emulate.run(matmul, [a, b])
    expected = a.astype(np.float32) @ b.astype(np.float32)
    assert np.allclose(result.astype(np.float32), expected, rtol=1e-2, atol=1e-2)
    # A sum of integers, folded in i32 by the row kernels, matches exactly.
    integers = Program({"a": (("s0", "s1"), "i32")},
                       [_op("nn.reduce_sum", ["a"], ["r"], axes=(1,))], ["r"],
                       {"s0": 3, "s1": 5}, seed=3)
    verdicts = check_program(integers, 0, [emulate])
    assert [v.kind for v in verdicts] == ["ok"], verdicts
    # An attention whose head dims need more shared memory than a block
    # has is not lowered to hw kernels: unsupported.
    unlowered = Program({"q": (("s0", "s1"), "f32")},
                        [_op("nn.attention", ["q", "q", "q"], ["r"])], ["r"],
                        {"s0": 4, "s1": 4096}, seed=3)
    verdicts = check_program(unlowered, 0, [emulate])
    assert any(v.kind == "unsupported" and v.configuration == "cuda-emulate" for v in verdicts)


def test_a_program_the_verifier_rejects_is_invalid():
    """A program the generator's rules accept and Lamina's verifier does
    not (here, a softmax of f64, which nn's normalisations do not take) is
    a finding of its own."""
    program = _program()
    program.ops.append(_op("nn.cast", ["r"], ["c"]))
    program.ops[-1].recipe["to"] = "f64"
    program.ops.append(_op("nn.softmax", ["c"], ["d"], axis=-1))
    program.outputs = ["d"]
    (verdict,) = check_program(program, 0, [])
    assert verdict.kind == "invalid" and "'nn.softmax' op operand #0 has element type f64" in \
        verdict.detail


# ---------------------------------------------------------------------------
# Child processes.


def test_children_report_results_crashes_and_hangs():
    def crash(report):
        report(("start", "cpu"))
        os.kill(os.getpid(), signal.SIGSEGV)

    def hang(report):
        report(("start", "slow"))
        time.sleep(60)

    def fine(report):
        print("to stdout")
        return 42

    def raises(report):
        raise ValueError("bad")

    outcomes = {o.key: o for o in run_children(
        [("crash", crash), ("hang", hang), ("fine", fine), ("raises", raises)], jobs=4,
        timeout=3)}
    assert outcomes["crash"].crashed and outcomes["crash"].signal == signal.SIGSEGV
    assert reports_of(outcomes["crash"]) == [("start", "cpu")]
    assert outcomes["hang"].timed_out and reports_of(outcomes["hang"]) == [("start", "slow")]
    assert result_of(outcomes["fine"]) == 42 and "to stdout" in outcomes["fine"].stdout_tail
    assert exception_of(outcomes["raises"]) == "ValueError: bad"


def test_a_crashing_child_reports_its_fault_in_its_own_stderr(tmp_path):
    """A fault handler enabled in the parent (pytest enables one) reports a
    child's crash in the child's stderr, not in the parent's log."""
    was_enabled = faulthandler.is_enabled()
    with open(tmp_path / "parent-stderr", "w+") as parent_stderr:
        faulthandler.enable(file=parent_stderr)
        try:
            outcome = run_child(lambda report: os.kill(os.getpid(), signal.SIGSEGV), timeout=10)
        finally:
            faulthandler.disable()
            if was_enabled:
                faulthandler.enable(file=sys.__stderr__)
        parent_stderr.seek(0)
        assert parent_stderr.read() == ""
    assert outcome.signal == signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in outcome.stderr_tail
    from lamina.fuzz_campaign import verdicts_of
    (verdict,) = verdicts_of(outcome)
    assert verdict.kind == "crash" and verdict.detail.endswith("Segmentation fault")


def test_a_crash_is_a_verdict():
    from lamina.fuzz_campaign import verdicts_of
    outcome = run_child(lambda report: (report(("start", "cpu")), os.abort()), timeout=10)
    (verdict,) = verdicts_of(outcome)
    assert verdict.kind == "crash" and verdict.configuration == "cpu"
    assert "SIGABRT" in verdict.detail


# ---------------------------------------------------------------------------
# The reducer.


def test_reducer_keeps_the_failure_and_shrinks_everything_else():
    def fails(candidate):
        types = candidate.types()
        return any(op.kind == "nn.matmul" and types[op.operands[0]].shape[-1].size >= 2
                   for op in candidate.ops)

    program = next(p for p in (generate_program(s, max_ops=8) for s in range(100))
                   if fails(p) and len(p.ops) >= 6)

    small = reduce_program(program, fails, budget=1000)
    assert fails(small) and small.is_valid()
    assert [op.kind for op in small.ops] == ["nn.matmul"]
    types = small.types()
    assert all(d.size <= 2 for name in small.inputs for d in types[name].shape)
    assert len(small.outputs) == 1


def test_a_reduced_case_is_a_lit_test():
    text = case_text(_program(), "Found by lamina-fuzz: crash in cpu", run_line("crash", "cpu", 3),
                     xfail=True)
    assert text.splitlines()[:3] == ["// Found by lamina-fuzz: crash in cpu",
                                     "// RUN: lamina-run %s --random --seed 3 -q", "// XFAIL: *"]
    assert "func.func @main(%a: tensor<5xf32>)" in text
    assert run_line("mismatch", "cpu", 7).endswith("--seed 7 --check -q")
    assert run_line("invalid", "verifier", 7).startswith("lamina-opt %s")


# ---------------------------------------------------------------------------
# Mutations and the rules tools keep.


def test_mutations_are_reproducible_and_change_the_input():
    data = Path(__file__).resolve().parent.parent.joinpath("Tools", "Inputs", "add.mlir").read_bytes()
    first = [mutate(data, random.Random(seed)) for seed in range(50)]
    assert first == [mutate(data, random.Random(seed)) for seed in range(50)]
    assert sum(m != data for m in first) >= 48


def test_tool_run_rules():
    def run(**changes):
        base = dict(tool="lamina-opt", input_path="x.mlir", exit_code=1, signal=None,
                    timed_out=False, seconds=0.1, stderr="x.mlir:3:4: error: bad\n",
                    output_kept=True)
        base.update(changes)
        return check_tool_run(ToolRun(**base))

    assert run() == [] and run(exit_code=0, stderr="") == []
    assert run(stderr="lamina-opt: error: no\nnote: in pass 'x'\n") == []
    assert run(signal=11, exit_code=None)
    assert run(stderr="Traceback (most recent call last):\n")
    assert run(stderr="error: somewhere\n")
    assert run(output_kept=False)
    assert run(timed_out=True)
    assert run(leftovers=[".out.lamina-tmp-1"])


# ---------------------------------------------------------------------------
# The command line.


def lamina_fuzz(*args, timeout=600) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "lamina-fuzz"
    command = [str(script)] if script.exists() else [sys.executable, "-m",
                                                     "lamina.tools.lamina_fuzz"]
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args,message", [
    (["--seed", "-1"], "--seed must be non-negative"),
    (["--jobs", "0"], "--jobs must be positive"),
    (["--configs", "gpu-magic"], "unknown configuration 'gpu-magic'"),
    (["--time", "0"], "--time must be positive"),
    (["--mutate", "/no/such/file.mlir"], "cannot open input file"),
])
def test_command_line_mistakes(args, message):
    done = lamina_fuzz(*args)
    assert done.returncode == 1 and done.stderr.startswith(f"lamina-fuzz: error: {message}"), \
        done.stderr


def test_timeout_bounds_a_plugin_that_loops_while_loading(tmp_path):
    plugin = tmp_path / "loops.py"
    plugin.write_text("while True:\n    pass\n")
    done = lamina_fuzz("--load-plugin", str(plugin), "--timeout", "2", "--count", "1",
                       timeout=60)
    assert done.returncode == 1 and done.stderr == (
        f"lamina-fuzz: error: the plugins ({plugin}) did not finish loading within "
        "--timeout 2 s\n"), done.stderr


def test_a_campaign_reports_and_writes_cases(tmp_path, monkeypatch):
    """A configuration that gets one op wrong is found, and its finding
    reduced to that op."""
    import lamina.fuzz_check as fuzz_check
    from lamina.fuzz_campaign import run_campaign

    def wrong_exp(text, inputs):
        results = fuzz_check.interpreted("f64")(text, inputs)
        return [r + 1 for r in results] if '"nn.exp"' in text else results

    broken = Configuration("broken-exp", wrong_exp, compiled=False)
    seeds = [i for i in range(400) if any(op.kind == "nn.exp" for op in
                                          generate_program(i).ops)]
    result = run_campaign(0, count=seeds[0] + 1, jobs=2, chosen=[broken],
                          output_dir=str(tmp_path))
    assert result.programs == seeds[0] + 1
    assert result.counts["mismatch"] >= 1 and result.failed
    (case,) = result.cases
    text = Path(case).read_text()
    assert "mismatch in broken-exp" in text and "// RUN: lamina-run %s --random --seed" in text
    assert text.count('"nn.') == 1 and '"nn.exp"' in text


def test_the_float64_reference_keeps_every_float_type_in_float64():
    """bf16 (whose NumPy kind is not 'f') is widened like f16 and f32, and
    the reference in the program's types rounds after each op."""
    from lamina.parsing import parse_source
    from lamina.reference import evaluate
    for dtype in FLOATS:
        t = f"tensor<64x{dtype}>"
        module = parse_source(f'func.func @main(%x: {t}) -> {t} {{\n'
                              f'  %0 = "nn.exp"(%x) : ({t}) -> {t}\n'
                              f'  %1 = "nn.tanh"(%0) : ({t}) -> {t}\n'
                              f'  return %1 : {t}\n}}\n', dtype)
        x = np.linspace(-1, 1, 64).astype(lookup_dtype(dtype))
        (exact,) = evaluate(module, [x], "main", "f64")
        (rounded,) = evaluate(module, [x], "main")
        assert exact.dtype == np.float64 and rounded.dtype == x.dtype
        np.testing.assert_allclose(exact, np.tanh(np.exp(x.astype(np.float64))), rtol=1e-12)
        assert not np.array_equal(exact, rounded.astype(np.float64))


def lookup_dtype(name: str):
    from lamina.types import numpy_dtype
    return numpy_dtype(name)


def test_a_short_mutation_run_keeps_every_rule():
    """CI's mutation run: 60 mutations of the tools' inputs through every
    tool (the soak, bench/soak.py, runs 10,000)."""
    # The small examples: a tool run has 10 s, and the larger ones (the
    # Llama block, the odd shapes) take most of it to compile on a loaded
    # 2-core machine (the soak runs every example).
    examples = Path(__file__).resolve().parent.parent.parent / "examples"
    inputs = [str(examples / f"{name}.mlir") for name in ("attention", "convnet", "gemm_f16",
                                                          "mlp")]
    inputs.append(str(Path(__file__).resolve().parent.parent / "Tools" / "Inputs" / "add.mlir"))
    done = lamina_fuzz("--mutate", *inputs, "--count", "60", "--seed", "1", "--jobs", "2",
                       "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ": 0 failures;" in done.stdout, done.stdout


def test_aarch64_configurations_run_under_qemu_or_are_unsupported():
    """The aarch64 configurations match the reference where QEMU and the
    cross compiler are installed; where they are not, the verdict is
    unsupported, not a finding."""
    import shutil

    from lamina.fuzz_check import configurations, no_emulator
    neon, sve = configurations(["aarch64", "aarch64-sve"])
    assert no_emulator("error: running aarch64 code on this machine needs qemu-aarch64 on "
                       "PATH") == "no emulator or cross compiler"
    assert no_emulator("error: llc exited with code 1") is None
    if not (shutil.which("qemu-aarch64") and shutil.which("aarch64-linux-gnu-gcc")):
        pytest.skip("qemu-aarch64 and aarch64-linux-gnu-gcc are not installed")
    source = """func.func @main(%a: tensor<3x21xf32>, %b: tensor<21xf32>) -> tensor<3x21xf32> {
  %0 = "nn.add"(%a, %b) : (tensor<3x21xf32>, tensor<21xf32>) -> tensor<3x21xf32>
  %1 = "nn.tanh"(%0) : (tensor<3x21xf32>) -> tensor<3x21xf32>
  return %1 : tensor<3x21xf32>
}"""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 21)).astype(np.float32)
    b = rng.uniform(-1, 1, 21).astype(np.float32)
    for configuration in (neon, sve):
        (result,) = configuration.run(source, [a, b])
        np.testing.assert_allclose(result, np.tanh(a + b), rtol=1e-5, atol=1e-6)
