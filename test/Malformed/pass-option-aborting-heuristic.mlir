// Malformed: a bufferization heuristic upstream reaches unreachable code on.
// TOOL: lamina-opt --one-shot-bufferize=analysis-heuristic=sideways
// ERROR-LINE: none
// ERROR: invalid options for pass 'one-shot-bufferize': invalid analysisheuristic option
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
