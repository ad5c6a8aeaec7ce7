"""The compiled-program cache: a second compile of the same program for the
same target loads the cached library and computes the same results; a
corrupted entry is ignored and replaced; the key follows the target's
options and the tuning cache; LAMINA_CACHE=0 writes nothing. Every test
uses its own cache directory."""

import os

import numpy as np
import pytest
from mlir.execution_engine import ExecutionEngine

import lamina
from lamina.cache import LoadedLibrary, program_key

# gelu(x @ w + b) and a second public function, on two threads.
PROGRAM = """
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>)
    -> tensor<16x64xf32> {
  %h = "nn.matmul"(%x, %w) : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %hb = "nn.add"(%h, %b) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %g = "nn.relu"(%hb) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %g : tensor<16x64xf32>
}
func.func @scale(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %y = "nn.add"(%x, %x) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
"""
TARGET = "cpu:threads=2"


def inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (32, 64), (64,))]


def reference(x, w, b):
    return np.maximum(x @ w + b, 0)


def entries(cache, suffix=".so"):
    return sorted((cache / "programs").glob("*" + suffix))


def test_second_compile_loads_the_cached_library(cache):
    compiled = lamina.compile(PROGRAM, target=TARGET)
    assert isinstance(compiled.engine, ExecutionEngine)
    assert len(entries(cache)) == 1 and len(entries(cache, ".json")) == 1
    loaded = lamina.compile(PROGRAM, target=TARGET)
    assert isinstance(loaded.engine, LoadedLibrary)
    args = inputs()
    np.testing.assert_array_equal(loaded(*args), compiled(*args))
    np.testing.assert_allclose(loaded(*args), reference(*args), rtol=1e-5, atol=1e-5)
    # Another public function of the same program is its own entry.
    scale = lamina.compile(PROGRAM, target=TARGET, entry="scale")
    np.testing.assert_array_equal(scale(args[0]), args[0] * 2)
    assert len(entries(cache)) == 2


def damage(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = b"\xcc" * 64
    path.write_bytes(bytes(data))


def test_a_corrupted_entry_is_ignored_and_replaced(cache):
    lamina.compile(PROGRAM, target=TARGET)
    args = inputs()
    for suffix in (".so", ".json"):
        damage(entries(cache, suffix)[0])
        recompiled = lamina.compile(PROGRAM, target=TARGET)
        assert isinstance(recompiled.engine, ExecutionEngine)
        np.testing.assert_allclose(recompiled(*args), reference(*args), rtol=1e-5, atol=1e-5)
    loaded = lamina.compile(PROGRAM, target=TARGET)
    assert isinstance(loaded.engine, LoadedLibrary)
    np.testing.assert_allclose(loaded(*args), reference(*args), rtol=1e-5, atol=1e-5)


def test_the_key_follows_target_options_entry_and_tuning(cache):
    module = lamina.parse(PROGRAM)
    keys = set()
    for target in ("cpu:threads=1", "cpu:threads=2"):
        t = lamina.get_target(target)
        keys.add(program_key(module, None, t.description(), str(t.pipeline()), str(cache)))
    t = lamina.get_target(TARGET)
    keys.add(program_key(module, "scale", t.description(), str(t.pipeline()), str(cache)))
    before = program_key(module, None, t.description(), str(t.pipeline()), str(cache))
    (cache / "tuning").mkdir()
    (cache / "tuning" / "0.json").write_text("{}")
    keys.add(program_key(module, None, t.description(), str(t.pipeline()), str(cache)))
    assert before in keys and len(keys) == 4
    # Locations do not matter; the program does.
    moved = lamina.parse("\n\n" + PROGRAM)
    assert program_key(moved, None, t.description(), str(t.pipeline()), str(cache)) in keys
    changed = lamina.parse(PROGRAM.replace('"nn.relu"', '"nn.tanh"'))
    assert program_key(changed, None, t.description(), str(t.pipeline()), str(cache)) not in keys


def test_lamina_cache_0_writes_nothing(cache, monkeypatch):
    monkeypatch.setenv("LAMINA_CACHE", "0")
    compiled = lamina.compile(PROGRAM, target=TARGET)
    assert isinstance(compiled.engine, ExecutionEngine)
    assert not os.listdir(cache)


def test_code_outside_lamina_that_defines_passes_is_part_of_the_key(cache, monkeypatch):
    from lamina.cache import user_definitions
    from lamina.pass_registry import REGISTRY
    before = user_definitions()
    user_pass = type("UserPass", (), {"__module__": __name__})
    monkeypatch.setitem(REGISTRY, "user-pass", user_pass)
    assert os.path.realpath(__file__) in user_definitions() != before
    # Defined where no file says what it is: nothing is cached.
    typed = type("TypedPass", (), {"__module__": "__typed_at_a_prompt__"})
    monkeypatch.setitem(REGISTRY, "typed-pass", typed)
    assert user_definitions() is None
    lamina.compile(PROGRAM, target=TARGET)
    assert not (cache / "programs").exists()


def test_least_recently_used_programs_go_beyond_the_limit(cache):
    from lamina.cache import evict
    programs = cache / "programs"
    programs.mkdir()
    for index in range(4):
        (programs / f"{index:064x}.so").write_bytes(b"\0" * 1000)
        (programs / f"{index:064x}.json").write_text("{}")
        os.utime(programs / f"{index:064x}.json", ns=(index * 10**9, index * 10**9))
    evict(str(programs), limit=10_000)
    assert len(entries(cache)) == 4
    evict(str(programs), limit=3_000)
    assert [p.name[:64] for p in entries(cache)] == [f"{i:064x}" for i in (2, 3)]
    assert len(entries(cache, ".json")) == 2


@pytest.mark.parametrize("to", ["linalg", "hw"])
def test_code_outside_lamina_that_defines_lowerings_is_part_of_the_key(monkeypatch, to):
    from lamina.cache import user_definitions
    from lamina.lowering.registry import registry
    before = user_definitions()

    def lower_user_op(op, *arguments):
        return None
    monkeypatch.setitem(registry(to).functions, type("UserOp", (), {}), lower_user_op)
    assert os.path.realpath(__file__) in user_definitions() != before


def test_bf16_constants_are_hashed_and_bound():
    """Large bf16 constants (no Python buffer format) are hashed from their
    text and stay initialisers; the program compiles and runs."""
    from lamina.cache import constants_digest
    from lamina.context import make_context
    from mlir import ir

    def module(last: float) -> str:
        values = ", ".join(["1.0"] * 99 + [str(last)])
        return (f"func.func @main(%x: tensor<100xbf16>) -> tensor<100xbf16> {{\n"
                f"  %w = arith.constant dense<[{values}]> : tensor<100xbf16>\n"
                f"  %y = \"nn.add\"(%x, %w) : (tensor<100xbf16>, tensor<100xbf16>) -> tensor<100xbf16>\n"
                f"  return %y : tensor<100xbf16>\n}}\n")
    with make_context():
        one, two = (constants_digest(ir.Module.parse(module(v))) for v in (2.0, 3.0))
    assert one and two and one != two
    f = lamina.compile(module(2.0))
    x = np.zeros(100, lamina.types.numpy_dtype("bf16"))
    y = f(x)
    assert y.astype(np.float32)[-1] == 2.0 and (y.astype(np.float32)[:-1] == 1.0).all()
