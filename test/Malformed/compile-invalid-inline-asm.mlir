// Malformed: inline assembly llc rejects, reported at the op.
// TOOL: lamina-compile --emit=obj
// ERROR-LINE: 7
// ERROR: invalid inline assembly: invalid instruction mnemonic 'bogus_instruction'
func.func @f(%x: tensor<4xf32>) {
  %c = arith.constant 1 : i32
  %r = llvm.inline_asm has_side_effects "bogus_instruction $0", "=r,r" %c : (i32) -> i32
  return
}
