// Malformed: a hexadecimal float literal of the wrong width.
// ERROR-LINE: 5
// ERROR: hexadecimal float constant out of range
func.func @f() {
  %c = arith.constant 0x7FC00000000 : f32
  return
}
