// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=SM80
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=ptx -o %t.sm80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=ptx -o %t.sm90.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90.ptx -o %t.sm90.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 1 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | lamina-run - --target=cuda:sm_80 --emulate --random -q
// RUN: lamina-opt %s --convert-nn-to-hw="chip=sm_80 tiles=128x64x32x2" | FileCheck %s --check-prefix=TILES
// RUN: not lamina-opt %s --convert-nn-to-hw="chip=sm_80 tiles=128x64" 2>&1 | FileCheck %s --check-prefix=BAD-TILES

// An nn f16 matmul + bias + relu of shapes that are not powers of two
// (200 x 200 x 136) compiles to PTX for sm_80 (a four-stage cp.async
// pipeline feeding ldmatrix + mma.sync) and sm_90a (TMA loads on
// mbarriers feeding wgmma); ptxas accepts both with no spills; the same
// hw kernels, emulated on the CPU, match the nn program's NumPy reference;
// the hw checkpoint (--emit=hw) runs again. The dynamic shared memory is
// declared as such, aligned for the tiles (1024 bytes for sm_90a's swizzled
// TMA boxes); on sm_80 the tiles that cp.async fills and ldmatrix reads are
// XOR-swizzled against bank conflicts. The epilogue reads the bias two
// columns at a time and stores two f16 results per 4-byte store. A forced
// tiling replaces the cost model's.

// SM80: .target sm_80
// SM80: .extern .shared .align 128 .b8 __dynamic_shmem__0[];
// SM80-LABEL: .entry main_matmul_0(
// SM80: xor.b64
// SM80: cp.async.cg.shared.global
// SM80: cp.async.commit_group;
// SM80: cp.async.wait_group 3;
// SM80: bar.sync 0;
// SM80: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM80: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM80: ld.global.v2.b16
// SM80: max.NaN.f32
// SM80: cvt.rn.f16x2.f32
// SM80: st.global.b32

// SM90: .target sm_90a
// SM90: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// SM90-LABEL: .entry main_matmul_0(
// SM90: mbarrier.init.shared.b64
// SM90: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90: mbarrier.try_wait.parity.shared.b64
// SM90: wgmma.mma_async.sync.aligned.m64n{{64|128}}k16.f32.f16.f16
// SM90: wgmma.wait_group.sync.aligned 0;

// PTXAS: Compiling entry function 'main_matmul_0'
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// TILES: "hw.launch"({{.*}}) {block = array<i64: 128>, grid = array<i64: 2, 3>, kernel = @main_matmul_0}
// TILES: memref<128x32xf16, #gpu.address_space<workgroup>>
// TILES: memref<32x64xf16, #gpu.address_space<workgroup>>
// TILES: "hw.pipeline"() {stages = 2 : i64}

// BAD-TILES: error: tiles='128x64' is not BMxBNxBKxSTAGES (e.g. 128x128x64x3)

// EMULATED: check res0 (tensor<200x136xf16>): {{.*}}: ok
// EMULATED: check: all results match the reference

func.func @main(%a: tensor<200x200xf16>, %b: tensor<200x136xf16>, %bias: tensor<136xf16>) -> tensor<200x136xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<200x200xf16>, tensor<200x136xf16>) -> tensor<200x136xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<200x136xf16>, tensor<136xf16>) -> tensor<200x136xf16>
  %2 = "nn.relu"(%1) : (tensor<200x136xf16>) -> tensor<200x136xf16>
  return %2 : tensor<200x136xf16>
}
