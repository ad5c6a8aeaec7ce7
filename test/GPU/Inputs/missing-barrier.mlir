// A kernel that reads a shared tile while other threads may still be
// writing it: the barrier between the two copies is missing.
func.func @main(%a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  "hw.launch"(%a, %b) {kernel = @transpose_free_copy, grid = array<i64: 1>, block = array<i64: 64>} : (memref<64x64xf32>, memref<64x64xf32>) -> ()
  return
}

func.func @transpose_free_copy(%a: memref<64x64xf32>, %b: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<workgroup>>
  "hw.copy"(%a, %s, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.copy"(%s, %b, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32>, index, index) -> ()
  return
}
