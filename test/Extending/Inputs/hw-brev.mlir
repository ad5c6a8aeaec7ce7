!G = memref<128x64xi32>
!R = memref<64x64xi32, #gpu.address_space<private>>

func.func @main(%x: !G, %out: !G) {
  "hw.launch"(%x, %out) {kernel = @reverse, grid = array<i64: 2>, block = array<i64: 128>} : (!G, !G) -> ()
  return
}

func.func @reverse(%x: !G, %out: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %row = arith.muli %bx, %c64 : index
  %rx = "hw.alloc"() : () -> !R
  %ro = "hw.alloc"() : () -> !R
  "hw.copy"(%x, %rx, %row, %c0) : (!G, !R, index, index) -> ()
  "hw.brev"(%rx, %ro) : (!R, !R) -> ()
  "hw.copy"(%ro, %out, %row, %c0) : (!R, !G, index, index) -> ()
  return
}
