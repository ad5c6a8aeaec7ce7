// Malformed: inline assembly the JIT could not assemble, reported at the op.
// TOOL: lamina-run --random -q
// ERROR-LINE: 7
// ERROR: invalid inline assembly: invalid instruction mnemonic 'bogus_instruction'
func.func @main(%x: tensor<4xf32>) {
  %c = arith.constant 1 : i32
  %r = llvm.inline_asm has_side_effects "bogus_instruction $0", "=r,r" %c : (i32) -> i32
  return
}
