// Found by bench/soak.py (mutation m3511 of a generated program): an array
// attribute whose elements are not i64 (`array<i664: ...>`) made the op's
// verifier fail inside the bindings' DenseArrayAttr conversion, which was
// reported at the op as an internal error of the verifier instead of as an
// attribute of the wrong kind.
// RUN: not lamina-opt %s -o /dev/null 2>&1 | FileCheck %s
// CHECK-NOT: internal error
// CHECK: :[[@LINE+3]]:{{[0-9]+}}: error: 'nn.max_pool2d' op attribute 'padding' must be an array<i64: ...>, got an array of another element type
// CHECK-NOT: internal error
func.func @main(%x: tensor<1x1x5x7xbf16>) -> tensor<1x1x5x6xbf16> {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 1, 2>, padding = array<i664: 0, 0, 0, 0>} : (tensor<1x1x5x7xbf16>) -> tensor<1x1x5x6xbf16>
  return %0 : tensor<1x1x5x6xbf16>
}
