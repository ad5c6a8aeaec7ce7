// Each function misuses one nn op in a way only its IRDL kinds can catch
// when upstream mlir-opt parses it without Lamina's Python rules.
func.func @matmul_on_memrefs(%a: memref<4x8xi32>, %b: memref<8x2xi32>) -> tensor<4x2xf32> {
  %0 = "nn.matmul"(%a, %b) : (memref<4x8xi32>, memref<8x2xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @relu_of_scalar(%x: f32) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (f32) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @result_not_a_tensor(%x: tensor<4xf32>) -> memref<4xf32> {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

func.func @predicate_not_a_string(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "nn.compare"(%x, %x) {predicate = 3 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
