# RUN: %PYTHON %s | FileCheck %s
#
# The built-in hardware instructions run in the CPU emulation
# (convert-hw-to-loops through the emulated cuda:sm_89 target) exactly as
# the hardware defines them: hw.cvt_e4m3x2 against ml_dtypes' float8_e4m3fn
# with saturation, on every e4m3 value, the midpoints between neighbours
# (ties round to even) and their f32 neighbours, subnormals, zeros,
# infinities, NaNs, overflow and random bit patterns; hw.prmt against a
# byte-by-byte permute written in plain Python. The ops' NumPy references
# (the same `emulate` functions on arrays) give the same bits.

import ml_dtypes
import numpy as np

import lamina
import lamina.types
from lamina.dialects.opdef import lookup_op
from lamina.targets import get_target

EMULATED = get_target("cuda:sm_89").emulation()
RNG = np.random.default_rng(11)
ROWS = 64  # rows of a block's tile; each block of the grid takes the next 64


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def program(instruction: str, inputs: list[str], out: str, rows: int) -> str:
    """A kernel on a grid of blocks, each loading 64x64 tiles of the
    inputs into registers, applying `instruction` and storing the result."""
    glob = [f"memref<{rows}x64x{t}>" for t in inputs + [out]]
    regs = [f"memref<64x64x{t}, #gpu.address_space<private>>" for t in inputs + [out]]
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(glob))
    names = ", ".join(f"%arg{i}" for i in range(len(glob)))
    n = len(inputs)
    body = [f'  %r{i} = "hw.alloc"() : () -> {regs[i]}' for i in range(n + 1)]
    body += [f'  "hw.copy"(%arg{i}, %r{i}, %row, %c0) : ({glob[i]}, {regs[i]}, index, index) -> ()'
             for i in range(n)]
    body.append(f'  "hw.{instruction}"({", ".join(f"%r{i}" for i in range(n + 1))}) : '
                f'({", ".join(regs)}) -> ()')
    body.append(f'  "hw.copy"(%r{n}, %arg{n}, %row, %c0) : ({regs[n]}, {glob[n]}, index, '
                'index) -> ()')
    return f"""
func.func @main({args}) {{
  "hw.launch"({names}) {{kernel = @kernel, grid = array<i64: {rows // ROWS}>, block = array<i64: 128>}} : ({", ".join(glob)}) -> ()
  return
}}
func.func @kernel({args}) attributes {{hw.kernel}} {{
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {{dim = 0 : i64}} : () -> index
  %row = arith.muli %bx, %c64 : index
{chr(10).join(body)}
  return
}}
"""


def emulate(instruction: str, arrays: list[np.ndarray]) -> np.ndarray:
    """The instruction on `arrays` (the last one receives the result),
    emulated; also checks that the op's NumPy reference agrees bit for bit."""
    dtypes = [lamina.types.element_type_name(a.dtype) for a in arrays]
    module = lamina.parse(program(instruction, dtypes[:-1], dtypes[-1], arrays[0].shape[0]))
    emulated = [a.copy() for a in arrays]
    EMULATED.compile(module, entry="main")(*emulated)
    reference = arrays[-1].copy()
    lookup_op(f"hw.{instruction}")({}).reference(*arrays[:-1], reference)
    print("reference agrees:", np.array_equal(reference, emulated[-1]))
    return emulated[-1]


def padded(values: np.ndarray, count: int) -> np.ndarray:
    return np.concatenate([values, RNG.choice(values, count - len(values))])


def cvt_inputs(count: int) -> np.ndarray:
    """f32 values that exercise every rounding case of e4m3."""
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    finite = np.unique(codes[np.isfinite(codes)])
    midpoints = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    around = np.concatenate([np.nextafter(midpoints, np.float32(np.inf)),
                             np.nextafter(midpoints, np.float32(-np.inf))])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448, 449, 463.99, 464,
                        465, 480, 1e30, 3.4e38, 2 ** -9, 2 ** -10, 2 ** -11, 3 * 2 ** -10,
                        1e-40, 1e-45], np.float32)
    special = np.concatenate([special, -special])
    payload_nans = (np.uint32(0x7F800001) + RNG.integers(0, 2 ** 22, 64).astype(np.uint32))
    random_bits = RNG.integers(0, 2 ** 32, count // 2, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([finite, midpoints, around, special, payload_nans.view(np.float32),
                             (payload_nans | np.uint32(1 << 31)).view(np.float32),
                             random_bits.view(np.float32),
                             RNG.normal(0, 2.0 ** RNG.integers(-12, 10, count // 4), count // 4)
                             .astype(np.float32)])
    return padded(values, count)


def e4m3_code(x: np.ndarray) -> np.ndarray:
    """What cvt.rn.satfinite does, by ml_dtypes: saturate, then round."""
    with np.errstate(invalid="ignore"):
        return np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


# Two f32 tiles packed into one 16-bit tile of e4m3 codes (hi in the upper
# byte); NaN gives the e4m3 NaN, every other code equals ml_dtypes'.
# CHECK-LABEL: TEST: cvt_e4m3x2
# CHECK-NEXT: reference agrees: True
# CHECK-NEXT: NaN inputs: {{[0-9]+}}, all NaN codes: True
# CHECK-NEXT: codes differing from ml_dtypes: 0 of 262144
@run
def cvt_e4m3x2():
    rows = 2048
    values = cvt_inputs(2 * rows * 64)
    hi, lo = (v.reshape(rows, 64) for v in np.split(values, 2))
    packed = emulate("cvt_e4m3x2", [hi, lo, np.zeros((rows, 64), np.int16)]).view(np.uint16)
    codes = np.concatenate([(packed >> 8).ravel(), (packed & 0xFF).ravel()]).astype(np.uint8)
    inputs = np.concatenate([hi.ravel(), lo.ravel()])
    nan = np.isnan(inputs)
    print(f"NaN inputs: {nan.sum()}, all NaN codes: {bool((codes[nan] & 0x7F == 0x7F).all())}")
    differing = (codes[~nan] != e4m3_code(inputs[~nan])).sum()
    print(f"codes differing from ml_dtypes: {differing} of {codes.size}")


def prmt_naive(a: int, b: int, selector: int) -> int:
    data = (b << 32) | a
    result = 0
    for k in range(4):
        nibble = (selector >> (4 * k)) & 0xF
        byte = (data >> (8 * (nibble & 7))) & 0xFF
        if nibble & 8:
            byte = 0xFF if byte & 0x80 else 0
        result |= byte << (8 * k)
    return result


# Every selector nibble (0-15, sign replication included) at every byte.
# CHECK-LABEL: TEST: prmt
# CHECK-NEXT: reference agrees: True
# CHECK-NEXT: results differing from the byte-by-byte permute: 0 of 32768
@run
def prmt():
    rows = 512
    a, b, selector = (RNG.integers(0, 2 ** 32, (rows, 64), dtype=np.uint64).astype(np.uint32)
                      for _ in range(3))
    got = emulate("prmt", [a.view(np.int32), b.view(np.int32), selector.view(np.int32),
                           np.zeros((rows, 64), np.int32)]).view(np.uint32)
    want = [prmt_naive(int(x), int(y), int(s)) for x, y, s in
            zip(a.ravel(), b.ravel(), selector.ravel())]
    print("results differing from the byte-by-byte permute:",
          int((got.ravel() != np.array(want, np.uint32)).sum()), "of", got.size)
