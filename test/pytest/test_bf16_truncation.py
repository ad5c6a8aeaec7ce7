"""`cpu-define-bf16-truncation`'s `__truncsfbf2`, JIT-compiled and called
on f32 values that exercise its rounding (ties to even, carries into the
exponent, overflow to infinity), signed zeros, subnormals, infinities and
NaNs: bit-exact against ml_dtypes' conversion (round to nearest even),
NaNs compared as NaNs."""

from __future__ import annotations

import ctypes

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import get_ranked_memref_descriptor

from lamina.context import make_context
from lamina.passes.cpu_define_bf16_truncation import CPUDefineBF16Truncation
from lamina.types import numpy_dtype

# Converts each element by calling the function, as LLVM's code does.
PROGRAM = """
func.func private @__truncsfbf2(f32) -> bf16
func.func @convert(%x: memref<?xf32>, %y: memref<?xi16>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %b = func.call @__truncsfbf2(%v) : (f32) -> bf16
    %h = arith.bitcast %b : bf16 to i16
    memref.store %h, %y[%i] : memref<?xi16>
  }
  return
}
"""


def values() -> np.ndarray:
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan,
                        3.3895314e38, 3.4028235e38, 1e-40, -1e-45, 1.17549435e-38], np.float32)
    bits = np.array([
        0x3F808000, 0x3F818000,   # halfway: ties to the even neighbour (down, up)
        0x3F80FFFF, 0x3F807FFF,   # just above and below halfway
        0x7F7FFFFF, 0x7F7F8000,   # rounds up into infinity
        0x7FC00001, 0x7F800001,   # quiet and signalling NaNs
        0xFF810000, 0x00008000,   # a negative NaN; a subnormal's halfway
    ], np.uint32).view(np.float32)
    rng = np.random.default_rng(3)
    random = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([special, bits, random])


def test_truncation_matches_round_to_nearest_even():
    with make_context():
        module = ir.Module.parse(PROGRAM)
        PassManager.parse("builtin.module(convert-scf-to-cf,convert-to-llvm,"
                          "reconcile-unrealized-casts)").run(module.operation)
        CPUDefineBF16Truncation().run(module.operation)
        engine = ExecutionEngine(module, opt_level=2)
        x = values()
        y = np.zeros(x.shape, np.int16)
        arguments = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a)))
                     for a in (x, y)]
        engine.invoke("convert", *arguments)
    got = y.view(numpy_dtype("bf16")).astype(np.float32)
    with np.errstate(invalid="ignore"):  # NaNs convert to NaNs
        want = x.astype(numpy_dtype("bf16")).astype(np.float32)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    # NaNs stay quiet NaNs of the same sign.
    assert (np.signbit(got[nan]) == np.signbit(x[nan])).all()
    assert (y.view(np.uint16)[nan] & 0x0040).all()
    assert (got[~nan].view(np.uint32) == want[~nan].view(np.uint32)).all()
