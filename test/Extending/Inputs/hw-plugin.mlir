!G = memref<128x64xi32>
!R = memref<64x64xi32, #gpu.address_space<private>>
!F = memref<128x64xf32>
!RF = memref<64x64xf32, #gpu.address_space<private>>
!H = memref<128x64xf16>
!RH = memref<64x64xf16, #gpu.address_space<private>>

func.func @main(%x: !G, %out: !G, %f: !F, %h: !H) {
  "hw.launch"(%x, %out, %f, %h) {kernel = @reverse_and_round, grid = array<i64: 2>, block = array<i64: 128>} : (!G, !G, !F, !H) -> ()
  return
}

func.func @reverse_and_round(%x: !G, %out: !G, %f: !F, %h: !H) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %row = arith.muli %bx, %c64 : index
  %rx = "hw.alloc"() : () -> !R
  %ro = "hw.alloc"() : () -> !R
  %rf = "hw.alloc"() : () -> !RF
  %rh = "hw.alloc"() : () -> !RH
  "hw.copy"(%x, %rx, %row, %c0) : (!G, !R, index, index) -> ()
  "hw.brev"(%rx, %ro) : (!R, !R) -> ()
  "hw.copy"(%ro, %out, %row, %c0) : (!R, !G, index, index) -> ()
  "hw.copy"(%f, %rf, %row, %c0) : (!F, !RF, index, index) -> ()
  "hw.cvt_f16"(%rf, %rh) : (!RF, !RH) -> ()
  "hw.copy"(%rh, %h, %row, %c0) : (!RH, !H, index, index) -> ()
  return
}
