// Malformed: an upstream option that does not exist.
// TOOL: lamina-opt --cse=aggressive=1
// ERROR-LINE: none
// ERROR: invalid options for pass 'cse': no such option aggressive
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
