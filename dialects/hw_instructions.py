"""Hardware instructions: hw ops that wrap one PTX instruction.

An instruction op applies a PTX instruction elementwise to register tiles
of one shape: `out[i, j] = instruction(x[i, j], y[i, j], ...)`. Its class
(a subclass of `Instruction` in the hw dialect) declares everything Lamina
needs to check it, run it on the CPU and reach PTX:

* its operands: register tiles (`Reg("i32")`; i16, i32, f16, bf16 or
  f32), the instruction's inputs in the order of its PTX operands, then
  `out`, which receives its result;
* `ptx`: the instruction as CUDA's inline assembly writes it, `$0` the
  result and `$1`, `$2`, ... the inputs, and `constraints`, the operands'
  register classes (`"=h,f,f"`: a 16-bit result from two f32 inputs),
  which must agree with the element types (checked when the class is
  defined);
* `needs`: the oldest architecture that has the instruction and the PTX
  version that introduced it (`("sm_89", (7, 8))`; an architecture-specific
  one such as `sm_90a` means that architecture only); `hw-check` reports
  the op on any other target, before anything reaches LLVM;
* `emulate`: the instruction on one element, a Python function of the
  inputs written with Python's operators and `where` and `bits` from this
  module. Integers are unsigned 32-bit values (narrower ones zero
  extended; shifts are logical, comparisons unsigned), f32 inputs are
  floats, `bits(x)` is an f32's bit pattern. The same function runs on
  NumPy arrays (the op's reference) and builds the arith ops of the CPU
  emulation (`convert-hw-to-loops`), so the two cannot disagree. An
  integer result is truncated to `out`'s width.

The GPU lowering (`convert-hw-to-nvgpu`) gives each thread its elements of
the tiles and emits the instruction through upstream's `nvvm.inline_ptx`.
A plugin (`--load-plugin=FILE.py`) declares an instruction the same way;
the two built-in ones follow:

* `hw.prmt`: byte permute (`prmt.b32`, every architecture);
* `hw.cvt_e4m3x2`: two f32 to two fp8 e4m3 values packed in 16 bits
  (`cvt.rn.satfinite.e4m3x2.f32`, sm_89 and later).
"""

from __future__ import annotations

import re
import numpy as np
from mlir import ir
from mlir.dialects import arith, nvvm

from lamina.dialects import hw
from lamina.dialects.opdef import MemRefOf, Operand, VerifyError

# The register class of each element type an instruction's tiles may have,
# as inline assembly's constraints write it.
CONSTRAINTS = {"i16": "h", "f16": "h", "bf16": "h", "i32": "r", "f32": "f"}


def Reg(dtype: str) -> MemRefOf:
    """A register tile of `dtype`, as an instruction's operand type."""
    return MemRefOf(dtype, space="private")


class Instruction(hw.RegisterTileOp):
    """Base of the ops that apply one PTX instruction elementwise to
    register tiles (see the module docstring)."""

    ptx = ""
    constraints = ""
    needs = ("sm_80", (7, 0))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "emulate" in cls.__dict__ and not isinstance(cls.__dict__["emulate"], staticmethod):
            cls.emulate = staticmethod(cls.__dict__["emulate"])
        if cls.__dict__.get("name") is None or "ptx" not in cls.__dict__:
            return
        try:
            cls.check_declaration()
        except TypeError:
            del cls.dialect.ops[cls.name]
            raise

    @classmethod
    def check_declaration(cls) -> None:
        """Raises TypeError, naming the class, where its declarations disagree."""
        if not callable(getattr(cls, "emulate", None)):
            raise TypeError(f"{cls.__name__}: an instruction needs an 'emulate' function")
        names = [d.name for d in cls.operand_decls]
        if not names or names[-1] != "out":
            raise TypeError(f"{cls.__name__}: an instruction's last operand is 'out'")
        dtypes = [cls.operand_dtype(d) for d in cls.operand_decls]
        for decl, dtype in zip(cls.operand_decls, dtypes):
            if dtype not in CONSTRAINTS:
                raise TypeError(f"{cls.__name__}: operand '{decl.name}' is a tile of {dtype}; "
                                f"instructions take tiles of {', '.join(CONSTRAINTS)}")
        expected = ",".join(["=" + CONSTRAINTS[dtypes[-1]]]
                            + [CONSTRAINTS[t] for t in dtypes[:-1]])
        if cls.constraints != expected:
            raise TypeError(f"{cls.__name__}: constraints '{cls.constraints}' do not match the "
                            f"operands' element types ({', '.join(dtypes[:-1])} -> {dtypes[-1]}: "
                            f"'{expected}')")
        if not re.fullmatch(r"sm_\d+a?", cls.needs[0]):
            raise TypeError(f"{cls.__name__}: needs an architecture like 'sm_89', not "
                            f"'{cls.needs[0]}'")

    @staticmethod
    def operand_dtype(decl) -> str:
        dtypes = decl.constraint.dtypes
        if len(dtypes) != 1:
            raise TypeError(f"operand '{decl.name}' of an instruction has one element type")
        return dtypes[0]

    @property
    def sm(self) -> int:
        return int(re.sub(r"\D", "", self.needs[0]))

    def verify_tiles(self, *tiles):
        if any(t.shape != tiles[-1].shape for t in tiles):
            raise VerifyError("tiles of different shapes: " +
                              ", ".join(hw.dims(t.shape) for t in tiles))

    def reference(self, *arrays):
        *inputs, out = arrays
        result = self.emulate(*(_numpy_input(a) for a in inputs))
        result = np.broadcast_to(np.asarray(result), out.shape)
        if out.dtype.kind in "iu":
            unsigned = result.astype(np.uint64).astype(f"u{out.dtype.itemsize}")
            out[...] = unsigned.view(out.dtype)
        else:
            out[...] = result.astype(out.dtype)

    # -- CPU emulation and PTX, on the elements of one position -------------

    def emulate_element(self, inputs: list[ir.Value], out_type: ir.Type) -> ir.Value:
        """The arith ops computing the result from the inputs' elements."""
        result = self.emulate(*(BitValue(_widened(v)) for v in inputs))
        value = BitValue.of(result, out_type).value
        if value.type == out_type:
            return value
        if isinstance(out_type, ir.IntegerType):
            widen = ir.IntegerType(value.type).width < out_type.width
            return (arith.extui if widen else arith.trunci)(out_type, value)
        return arith.truncf(out_type, value)

    def ptx_element(self, inputs: list[ir.Value], out_type: ir.Type) -> ir.Value:
        """The instruction on one element of each tile, as inline PTX."""
        code = re.sub(r"\$(\d+)", lambda m: "{$w0}" if m.group(1) == "0"
                      else "{$r%d}" % (int(m.group(1)) - 1), self.ptx)
        # nvvm.inline_ptx takes 16-bit floats as the i16 of their bits.
        i16 = ir.IntegerType.get_signless(16)
        half = (ir.F16Type, ir.BF16Type)
        inputs = [arith.bitcast(i16, v) if isinstance(v.type, half) else v for v in inputs]
        result = nvvm.inline_ptx([i16 if isinstance(out_type, half) else out_type], inputs, [],
                                 code)
        return arith.bitcast(out_type, result) if isinstance(out_type, half) else result


def _numpy_input(array: np.ndarray) -> np.ndarray:
    if array.dtype.kind in "iu":
        return array.view(f"u{array.dtype.itemsize}").astype(np.uint32)
    return array.astype(np.float32)


def _widened(value: ir.Value) -> ir.Value:
    """An element as `emulate` sees it: integers as 32 bits, floats as f32."""
    t = value.type
    if isinstance(t, ir.IntegerType) and t.width < 32:
        return arith.extui(ir.IntegerType.get_signless(32), value)
    if isinstance(t, (ir.F16Type, ir.BF16Type)):
        return arith.extf(ir.F32Type.get(), value)
    return value


# ---------------------------------------------------------------------------
# The emulation's values: Python operators that build arith ops.

_UNSIGNED = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}
_ORDERED = {"<": "olt", "<=": "ole", ">": "ogt", ">=": "oge", "==": "oeq", "!=": "une"}


class BitValue:
    """One element in the CPU emulation of an instruction: an i32
    (unsigned), f32 or i1 MLIR value with Python's operators, the bitwise
    ones and shifts included. Not `lamina.scalar.Scalar`: that form is
    floating point only (an expression traced once, for NumPy, linalg and
    the register-tile ops), an instruction's is bit-level and builds arith
    ops directly."""

    def __init__(self, value: ir.Value):
        self.value = value

    @staticmethod
    def of(x, like: ir.Type) -> "BitValue":
        """`x` (a BitValue or a Python number) as a BitValue; numbers take the
        type `like` (i32 for any integer type)."""
        if isinstance(x, BitValue):
            return x
        if isinstance(like, ir.FloatType):
            return BitValue(arith.constant(ir.F32Type.get(), float(x)))
        width = 1 if like == ir.IntegerType.get_signless(1) else 32
        signed = int(x) & ((1 << width) - 1)
        if width > 1 and signed >= 1 << (width - 1):
            signed -= 1 << width
        return BitValue(arith.constant(ir.IntegerType.get_signless(width), signed))

    @property
    def is_float(self) -> bool:
        return isinstance(self.value.type, ir.FloatType)

    def _apply(self, other, integer, floating=None, reverse=False) -> "BitValue":
        a, b = self.value, BitValue.of(other, self.value.type).value
        if reverse:
            a, b = b, a
        operation = floating if self.is_float else integer
        if operation is None:
            raise TypeError("this operator takes integers")
        return BitValue(operation(a, b))

    def _compare(self, other, relation: str) -> "BitValue":
        other = BitValue.of(other, self.value.type).value
        if self.is_float:
            return BitValue(arith.cmpf(getattr(arith.CmpFPredicate, _ORDERED[relation]),
                                     self.value, other))
        return BitValue(arith.cmpi(getattr(arith.CmpIPredicate, _UNSIGNED[relation]),
                                 self.value, other))

    def __add__(self, o): return self._apply(o, arith.addi, arith.addf)
    def __radd__(self, o): return self._apply(o, arith.addi, arith.addf, True)
    def __sub__(self, o): return self._apply(o, arith.subi, arith.subf)
    def __rsub__(self, o): return self._apply(o, arith.subi, arith.subf, True)
    def __mul__(self, o): return self._apply(o, arith.muli, arith.mulf)
    def __rmul__(self, o): return self._apply(o, arith.muli, arith.mulf, True)
    def __and__(self, o): return self._apply(o, arith.andi)
    def __rand__(self, o): return self._apply(o, arith.andi, reverse=True)
    def __or__(self, o): return self._apply(o, arith.ori)
    def __ror__(self, o): return self._apply(o, arith.ori, reverse=True)
    def __xor__(self, o): return self._apply(o, arith.xori)
    def __rxor__(self, o): return self._apply(o, arith.xori, reverse=True)
    def __lshift__(self, o): return self._apply(o, arith.shli)
    def __rlshift__(self, o): return self._apply(o, arith.shli, reverse=True)
    def __rshift__(self, o): return self._apply(o, arith.shrui)
    def __rrshift__(self, o): return self._apply(o, arith.shrui, reverse=True)
    def __lt__(self, o): return self._compare(o, "<")
    def __le__(self, o): return self._compare(o, "<=")
    def __gt__(self, o): return self._compare(o, ">")
    def __ge__(self, o): return self._compare(o, ">=")
    def __eq__(self, o): return self._compare(o, "==")
    def __ne__(self, o): return self._compare(o, "!=")
    __hash__ = None


def where(condition, x, y):
    """`x` where `condition` holds, else `y` (NumPy's `where`, or a select)."""
    if not isinstance(condition, BitValue):
        return np.where(condition, x, y)
    like = next((v.value.type for v in (x, y) if isinstance(v, BitValue)),
                ir.IntegerType.get_signless(32))
    return BitValue(arith.select(condition.value, BitValue.of(x, like).value,
                               BitValue.of(y, like).value))


def bits(x):
    """The bit pattern of an f32, as an unsigned 32-bit integer."""
    if isinstance(x, BitValue):
        return BitValue(arith.bitcast(ir.IntegerType.get_signless(32), x.value))
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


# ---------------------------------------------------------------------------
# The built-in instructions.


class PrmtOp(Instruction, name="prmt"):
    """Byte permute (`prmt.b32`, default mode): byte k of the result is
    chosen by nibble k of `selector` from the eight bytes of {b, a} (0-3:
    a's, 4-7: b's); when the nibble's bit 3 is set, the chosen byte's sign
    bit is replicated over the whole byte. Every architecture.

    Example: "hw.prmt"(%a, %b, %s, %out) : (memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>) -> ()
    """

    a: Operand[Reg("i32")]
    b: Operand[Reg("i32")]
    selector: Operand[Reg("i32")]
    out: Operand[Reg("i32")]
    ptx = "prmt.b32 $0, $1, $2, $3;"
    constraints = "=r,r,r,r"
    needs = ("sm_80", (7, 0))

    def emulate(a, b, selector):
        result = 0
        for k in range(4):
            nibble = (selector >> (4 * k)) & 0xF
            lane = nibble & 3
            byte = where((nibble & 4) == 0, a >> (lane * 8), b >> (lane * 8)) & 0xFF
            byte = where((nibble & 8) == 0, byte, where((byte & 0x80) == 0, 0, 0xFF))
            result = result | (byte << (8 * k))
        return result


def e4m3(x):
    """The fp8 e4m3 (e4m3fn) code of f32 `x`, rounded to nearest even and
    saturated to +-448 (infinities too); NaN gives 0x7F."""
    u = bits(x)
    sign = (u >> 24) & 0x80
    magnitude = u & 0x7FFFFFFF
    # Normal results: 3 mantissa bits rounded to nearest even, exponent rebiased (127 -> 7).
    normal = ((magnitude + 0x7FFFF + ((magnitude >> 20) & 1)) >> 20) - (120 << 3)
    # Below 2^-6: multiples of 2^-9 (the subnormals; 8 of them is the least normal).
    exponent = magnitude >> 23
    shift = where(exponent < 110, 31, 141 - exponent)
    mantissa = (magnitude & 0x7FFFFF) | 0x800000
    kept, rest, half = mantissa >> shift, mantissa & ((1 << shift) - 1), 1 << (shift - 1)
    up = (rest > half) | ((rest == half) & ((kept & 1) == 1))
    small = kept + where(up, 1, 0)
    code = where(magnitude < 0x3C800000, small, where(normal > 0x7E, 0x7E, normal))
    return where(magnitude > 0x7F800000, 0x7F, sign | code)


class CvtE4M3x2Op(Instruction, name="cvt_e4m3x2"):
    """Converts two f32 tiles to fp8 e4m3 (`cvt.rn.satfinite.e4m3x2.f32`):
    each element of `out` packs the code of `hi` in its upper byte and of
    `lo` in its lower byte, rounded to nearest even, finite values and
    infinities saturated to +-448, NaN the NaN 0x7F. sm_89 and later
    (PTX 7.8; ptxas wants PTX 8.1 on sm_89, which `cuda:sm_89` declares).

    Example: "hw.cvt_e4m3x2"(%hi, %lo, %out) : (memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xi16, #gpu.address_space<private>>) -> ()
    """

    hi: Operand[Reg("f32")]
    lo: Operand[Reg("f32")]
    out: Operand[Reg("i16")]
    ptx = "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
    constraints = "=h,f,f"
    needs = ("sm_89", (7, 8))

    def emulate(hi, lo):
        return (e4m3(hi) << 8) | e4m3(lo)
