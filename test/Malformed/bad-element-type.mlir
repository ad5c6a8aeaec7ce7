// Malformed: integer tensors given to a float op.
// ERROR-LINE: 5
// ERROR: 'nn.exp' op operand #0 has element type i32; expected f32 or f16 or bf16
func.func @f(%x: tensor<4xi32>) {
  %0 = "nn.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return
}
