// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Launches name a kernel of the module, with its argument types, a grid and
// whole warps; kernel-only ops stand in kernels.

func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<64xf32>) {
  // expected-error @+1 {{'hw.launch' op a block of 100 threads: blocks have a multiple of 32 threads (whole warps), at most 1024}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 100>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<64xf32>) {
  // expected-error @+1 {{'hw.launch' op a block of 2048 threads: blocks have a multiple of 32 threads (whole warps), at most 1024}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 64, 32>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<64xf32>) {
  // expected-error @+1 {{'hw.launch' op 'grid' must have 1 to 3 sizes >= 1, got [0]}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 0>, block = array<i64: 32>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @main(%a: memref<64xf32>) {
  // expected-error @+1 {{'hw.launch' op kernel @missing is not a function of the module}}
  "hw.launch"(%a) {kernel = @missing, grid = array<i64: 1>, block = array<i64: 32>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @not_a_kernel(%a: memref<64xf32>) {
  return
}
func.func @main(%a: memref<64xf32>) {
  // expected-error @+1 {{'hw.launch' op @not_a_kernel is not a kernel (it has no hw.kernel attribute)}}
  "hw.launch"(%a) {kernel = @not_a_kernel, grid = array<i64: 1>, block = array<i64: 32>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<32xf32>) {
  // expected-error @+1 {{'hw.launch' op arguments (memref<32xf32>) do not match kernel @k (memref<64xf32>)}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 32>} : (memref<32xf32>) -> ()
  return
}

// -----

func.func @k(%a: memref<64xf32, #gpu.address_space<workgroup>>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<64xf32, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'hw.launch' op argument #0 is in shared memory; kernels take memrefs in global memory and scalars}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 32>} : (memref<64xf32, #gpu.address_space<workgroup>>) -> ()
  return
}

// -----

func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.launch' op launches a kernel from inside a kernel}}
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 32>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @host() {
  // expected-error @+1 {{'hw.barrier' op must be inside a kernel (a func.func with the hw.kernel attribute)}}
  "hw.barrier"() : () -> ()
  return
}

// -----

func.func @k() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.block_id' op 'dim' must be 0, 1 or 2, got 3}}
  %b = "hw.block_id"() {dim = 3 : i64} : () -> index
  return
}
