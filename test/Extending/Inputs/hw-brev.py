"""A plugin's hardware instruction: bit reversal (brev.b32)."""

from lamina.dialects.opdef import Operand
from lamina.hw_instructions import Instruction, Reg


class BrevOp(Instruction, name="brev"):
    """Reverses the bits of each element (`brev.b32`); every architecture.

    Example: "hw.brev"(%x, %out) : (memref<64x64xi32, #gpu.address_space<private>>, memref<64x64xi32, #gpu.address_space<private>>) -> ()
    """

    x: Operand[Reg("i32")]
    out: Operand[Reg("i32")]
    ptx = "brev.b32 $0, $1;"
    constraints = "=r,r"
    needs = ("sm_80", (7, 0))

    def emulate(x):
        for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F),
                            (8, 0x00FF00FF), (16, 0x0000FFFF)):
            x = ((x >> shift) & mask) | ((x & mask) << shift)
        return x
