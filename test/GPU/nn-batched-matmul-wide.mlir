// RUN: lamina-compile %s --target=cuda:sm_90a --emit=gpu | FileCheck %s --check-prefix=GPU
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// A batched f16 matmul (8 x 1024x64 by 64x1024) that the cost model gives
// 128x128 tiles on sm_90a: B's tile is two 3-d TMA boxes (1x64x64) side by
// side along N, which one wgmma m64n128k16 reads MN-major through its
// descriptor's leading byte offset. Upstream's generated descriptor takes
// that offset from the box's first dim (1 x 128 bytes); the kernel sets it
// to the box stride, 8192 bytes (512 in 16-byte units, at bit 16). The
// thread-level check of the numbers is simt-sm90a-matmul.py.

// GPU-LABEL: gpu.func @main_matmul_0(
// GPU-DAG: %[[CLEAR:.+]] = arith.constant -1073676289 : i64
// GPU-DAG: %[[LEADING:.+]] = arith.constant 33554432 : i64
// GPU: %[[B:.+]] = nvgpu.warpgroup.generate.descriptor %{{.+}} : memref<64x128xf16, #gpu.address_space<workgroup>>, <tensor = memref<1x64x64xf16
// GPU: %[[BITS:.+]] = builtin.unrealized_conversion_cast %[[B]]
// GPU: %[[CLEARED:.+]] = arith.andi %[[BITS]], %[[CLEAR]] : i64
// GPU: %[[SET:.+]] = arith.ori %[[CLEARED]], %[[LEADING]] : i64
// GPU: %[[DESCRIPTOR:.+]] = builtin.unrealized_conversion_cast %[[SET]] : i64 to !nvgpu.warpgroup.descriptor
// GPU: nvgpu.warpgroup.mma %{{.+}}, %[[DESCRIPTOR]], %{{.+}} {transposeB}

// PTX-LABEL: .entry main_matmul_0(
// PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// CONTRACT: main_matmul_0: registers <= 255, no spills, no stack frame

func.func @main(%a: tensor<8x1024x64xf16>, %b: tensor<8x64x1024xf16>) -> tensor<8x1024x1024xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<8x1024x64xf16>, tensor<8x64x1024xf16>) -> tensor<8x1024x1024xf16>
  return %0 : tensor<8x1024x1024xf16>
}
