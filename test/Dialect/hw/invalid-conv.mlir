// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// The convolution ops: window sums into f32 tiles over a result space of
// the filter's channels, groups that divide the channels, a bias of the
// output channels; im2col gathers into a 2-d shared tile of the input's
// type, over the input's images.

func.func @groups_mismatch(%x: memref<1x6x8x8xf32>, %w: memref<4x2x3x3xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.conv_elements' op 2 groups of memref<1x6x8x8xf32> (6 channels) do not match the filter memref<4x2x3x3xf32>}}
  "hw.conv_elements"(%x, %w, %t, %o) {shape = array<i64: 1, 4, 6, 6>, count = 144 : i64, groups = 2 : i64} : (memref<1x6x8x8xf32>, memref<4x2x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @space_channels(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.conv_elements' op the space 1x5x6x6 is not a NCHW result of 1 images of the filter's 4 channels}}
  "hw.conv_elements"(%x, %w, %t, %o) {shape = array<i64: 1, 5, 6, 6>, count = 144 : i64} : (memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @bias_shape(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %b: memref<3xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.conv_elements' op the bias memref<3xf32> is not a vector of the 4 output channels}}
  "hw.conv_elements"(%x, %w, %t, %o, %b) {shape = array<i64: 1, 4, 6, 6>, count = 144 : i64} : (memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index, memref<3xf32>) -> ()
  return
}

// -----

func.func @f16_sums(%x: memref<1x3x8x8xf16>, %w: memref<4x3x3x3xf16>, %t: memref<256xf16, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.conv_elements' op operand #2 has element type f16; expected f32}}
  "hw.conv_elements"(%x, %w, %t, %o) {shape = array<i64: 1, 4, 6, 6>, count = 144 : i64} : (memref<1x3x8x8xf16>, memref<4x3x3x3xf16>, memref<256xf16, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @zero_stride(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.conv_elements' op 'strides' must be 2 values >= 1, got [0, 1]}}
  "hw.conv_elements"(%x, %w, %t, %o) {shape = array<i64: 1, 4, 6, 6>, count = 144 : i64, strides = array<i64: 0, 1>} : (memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @im2col_types(%x: memref<1x8x8x16xf16>, %a: memref<64x32xbf16, #gpu.address_space<workgroup>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.im2col' op element types differ: f16 vs bf16}}
  "hw.im2col"(%x, %a, %o, %o) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xbf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// -----

func.func @im2col_images(%x: memref<1x8x8x16xf16>, %a: memref<64x32xf16, #gpu.address_space<workgroup>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.im2col' op the space's 2 images are not the 1 of memref<1x8x8x16xf16>}}
  "hw.im2col"(%x, %a, %o, %o) {space = array<i64: 2, 8, 8>, window = array<i64: 3, 3>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// -----

func.func @im2col_registers(%x: memref<1x8x8x16xf16>, %a: memref<64x32xf16, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.im2col' op operand #1 is in private memory; expected workgroup memory}}
  "hw.im2col"(%x, %a, %o, %o) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

func.func private @scale(%acc: f32, %s: f16) -> f16 {
  %0 = arith.truncf %acc : f32 to f16
  return %0 : f16
}
func.func @store_extra_not_broadcast(%acc: memref<64x64xf32, #gpu.address_space<private>>, %y: memref<2x70x64xf16>, %s: memref<1x70x2xf16>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.store' op extra #0 memref<1x70x2xf16> is neither a vector of memref<2x70x64xf16>'s columns (64) nor of its shape (or its rank, broadcast)}}
  "hw.store"(%acc, %y, %s, %o, %o, %o) {epilogue = @scale, operandSegmentSizes = array<i32: 1, 1, 1, 3>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<2x70x64xf16>, memref<1x70x2xf16>, index, index, index) -> ()
  return
}
