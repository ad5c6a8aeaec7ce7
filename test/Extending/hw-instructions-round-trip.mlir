// RUN: lamina-opt %s | lamina-opt | FileCheck %s

// The built-in hardware instructions print and parse in generic form.

!R = memref<16x32xi32, #gpu.address_space<private>>
!RF = memref<16x32xf32, #gpu.address_space<private>>
!RH = memref<16x32xi16, #gpu.address_space<private>>

// CHECK-LABEL: func.func @instructions
// CHECK: "hw.prmt"(%[[A:.+]], %[[B:.+]], %[[S:.+]], %[[A]]) : (memref<16x32xi32, #gpu.address_space<private>>
// CHECK: "hw.cvt_e4m3x2"(%[[HI:.+]], %[[LO:.+]], %[[H:.+]]) : (memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xi16, #gpu.address_space<private>>) -> ()
func.func @instructions() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> !R
  %b = "hw.alloc"() : () -> !R
  %s = "hw.alloc"() : () -> !R
  %hi = "hw.alloc"() : () -> !RF
  %lo = "hw.alloc"() : () -> !RF
  %h = "hw.alloc"() : () -> !RH
  "hw.prmt"(%a, %b, %s, %a) : (!R, !R, !R, !R) -> ()
  "hw.cvt_e4m3x2"(%hi, %lo, %h) : (!RF, !RF, !RH) -> ()
  return
}
