// RUN: lamina-compile %s --target=cuda:sm_89 --emit=ptx -o %t.sm89.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM89 < %t.sm89.ptx
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90A < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_89 %t.sm89.ptx -o %t.sm89.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
// RUN: not lamina-compile %s --target=cuda:sm_80 --emit=ptx -o %t.sm80.ptx 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not test -e %t.sm80.ptx

// The built-in hardware instructions reach the kernel's PTX through
// nvvm.inline_ptx, one instruction per element a thread holds (a 64x64
// tile over 128 threads: 32 each), and ptxas accepts it for sm_89 (PTX
// 8.1, which e4m3x2 needs there) and sm_90a. sm_80 has no e4m3x2: hw-check
// rejects it at the op, before LLVM, and no file is written.

// SM89: .version 8.1
// SM89: .target sm_89
// SM90A: .version 8.0
// SM90A: .target sm_90a
// CHECK-LABEL: .entry fp8_and_permute(
// CHECK-COUNT-32: prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NOT: prmt.b32
// CHECK-COUNT-32: cvt.rn.satfinite.e4m3x2.f32 %rs{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NOT: cvt.rn.satfinite
// CHECK: ret;

// SM80: ptx-hw-instructions.mlir:[[# @LINE + 31]]:3: error: 'hw.cvt_e4m3x2' needs sm_89 or newer; the target is sm_80
// SM80-NOT: Traceback

!G = memref<64x64xi32>
!R = memref<64x64xi32, #gpu.address_space<private>>
!F = memref<64x64xf32>
!RF = memref<64x64xf32, #gpu.address_space<private>>
!H = memref<64x64xi16>
!RH = memref<64x64xi16, #gpu.address_space<private>>

func.func @main(%a: !G, %b: !G, %s: !G, %out: !G, %hi: !F, %lo: !F, %fp8: !H) {
  "hw.launch"(%a, %b, %s, %out, %hi, %lo, %fp8) {kernel = @fp8_and_permute, grid = array<i64: 1>, block = array<i64: 128>} : (!G, !G, !G, !G, !F, !F, !H) -> ()
  return
}

func.func @fp8_and_permute(%a: !G, %b: !G, %s: !G, %out: !G, %hi: !F, %lo: !F, %fp8: !H) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %ra = "hw.alloc"() : () -> !R
  %rb = "hw.alloc"() : () -> !R
  %rs = "hw.alloc"() : () -> !R
  %ro = "hw.alloc"() : () -> !R
  %rhi = "hw.alloc"() : () -> !RF
  %rlo = "hw.alloc"() : () -> !RF
  %rh = "hw.alloc"() : () -> !RH
  "hw.copy"(%a, %ra, %c0, %c0) : (!G, !R, index, index) -> ()
  "hw.copy"(%b, %rb, %c0, %c0) : (!G, !R, index, index) -> ()
  "hw.copy"(%s, %rs, %c0, %c0) : (!G, !R, index, index) -> ()
  "hw.prmt"(%ra, %rb, %rs, %ro) : (!R, !R, !R, !R) -> ()
  "hw.copy"(%ro, %out, %c0, %c0) : (!R, !G, index, index) -> ()
  "hw.copy"(%hi, %rhi, %c0, %c0) : (!F, !RF, index, index) -> ()
  "hw.copy"(%lo, %rlo, %c0, %c0) : (!F, !RF, index, index) -> ()
  "hw.cvt_e4m3x2"(%rhi, %rlo, %rh) : (!RF, !RF, !RH) -> ()
  "hw.copy"(%rh, %fp8, %c0, %c0) : (!RH, !H, index, index) -> ()
  return
}
