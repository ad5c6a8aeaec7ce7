"""A plugin's hardware instructions: bit reversal (brev.b32) and a
conversion to f16 (cvt.rn.f16.f32)."""

from lamina.dialects.opdef import Operand
from lamina.dialects.hw_instructions import Instruction, Reg


class BrevOp(Instruction, name="brev"):
    """Reverses the bits of each element (`brev.b32`); every architecture.

    Example: "hw.brev"(%x, %out) : (memref<64x64xi32, #gpu.address_space<private>>, memref<64x64xi32, #gpu.address_space<private>>) -> ()
    """

    x: Operand[Reg("i32")]
    out: Operand[Reg("i32")]
    ptx = "brev.b32 $0, $1;"
    constraints = "=r,r"

    def emulate(x):
        for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F),
                            (8, 0x00FF00FF), (16, 0x0000FFFF)):
            x = ((x >> shift) & mask) | ((x & mask) << shift)
        return x


class CvtF16Op(Instruction, name="cvt_f16"):
    """Rounds each f32 to the nearest f16, ties to even (`cvt.rn.f16.f32`).

    Example: "hw.cvt_f16"(%x, %out) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf16, #gpu.address_space<private>>) -> ()
    """

    x: Operand[Reg("f32")]
    out: Operand[Reg("f16")]
    ptx = "cvt.rn.f16.f32 $0, $1;"
    constraints = "=h,f"

    def emulate(x):
        return x  # the f32 result is rounded to out's f16 by Lamina, to nearest even
