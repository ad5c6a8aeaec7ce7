// Bound weights of an integer matmul are prepared once, in the
// initialiser: their column sums (the u8 form's compensation) and their
// packing into vpdpbusd's [N/16, K/4, 16, 4] panels; the function takes them
// prepared.
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=tiled | FileCheck %s

// CHECK-LABEL: func.func @main_init
// CHECK-SAME: (%{{.+}}: tensor<256x128xi8> {lamina.bound}) -> (tensor<128xi32>, tensor<8x64x16x4xi8>)
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.+}}: tensor<64x256xi8>, %{{.+}}: tensor<128xi32> {lamina.prepared}, %{{.+}}: tensor<8x64x16x4xi8> {lamina.prepared})
// CHECK-NOT: tensor<256x128xi8>
func.func @main(%a: tensor<64x256xi8>, %b: tensor<256x128xi8> {lamina.bound}) -> tensor<64x128xi32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x256xi8>, tensor<256x128xi8>) -> tensor<64x128xi32>
  return %0 : tensor<64x128xi32>
}
