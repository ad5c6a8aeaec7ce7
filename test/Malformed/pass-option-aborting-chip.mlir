// Malformed: an empty target chip upstream asserts on.
// TOOL: lamina-opt --nvvm-attach-target=chip=
// ERROR-LINE: none
// ERROR: invalid options for pass 'nvvm-attach-target': The target chip cannot be empty
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
