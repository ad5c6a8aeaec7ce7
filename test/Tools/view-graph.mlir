// lamina-opt --view-graph draws each function after the passes: one box per
// op with its result types, edges labelled with shapes and element types,
// the arguments and results, and fusion groups as clusters labelled with
// their kind. The IR still goes to stdout.
// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --view-graph=%t.dot | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --input-file=%t.dot
// RUN: lamina-opt %s --split-input-file --nn-decompose --nn-fuse --convert-nn-to-linalg --nn-inline-fused --view-graph %t.linalg.dot > /dev/null
// RUN: FileCheck %s --check-prefix=MARKED --input-file=%t.linalg.dot
// Without a source file to read, arguments have the names MLIR prints.
// RUN: cat %s | lamina-opt - --split-input-file --view-graph=%t.stdin.dot > /dev/null
// RUN: FileCheck %s --check-prefix=STDIN --input-file=%t.stdin.dot

// IR: func.func @matmul_bias_relu
// IR: "nn.fused"
// IR: // -----
// IR: func.func @reshape_between

// CHECK: digraph lamina {
// CHECK: subgraph cluster_[[F:[0-9]+]] {
// CHECK-NEXT: label="@matmul_bias_relu"
// CHECK-DAG: [[X:arg[0-9]+]] [shape=oval, {{.*}}label=<%x<br/><font point-size="10">4x8xf32</font>>];
// CHECK-DAG: [[W:arg[0-9]+]] [shape=oval, {{.*}}label=<%w<br/><font point-size="10">8x16xf32</font>>];
// CHECK: subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT: label="fusion_0 · contraction"; style="filled,rounded"; fillcolor="#dbe9f6"
// CHECK: [[MM:op[0-9]+]] [shape=box, {{.*}}label=<<b>nn.matmul</b><br/><font point-size="10">4x16xf32</font>>, tooltip="{{.*}}view-graph.mlir:[[@LINE+23]]:8"];
// CHECK: [[ADD:op[0-9]+]] [{{.*}}<b>nn.add</b>
// CHECK: [[RELU:op[0-9]+]] [{{.*}}<b>nn.relu</b>
// CHECK: }
// CHECK: [[RESULT:result[0-9]+]] [shape=house, {{.*}}label=<result 0<br/><font point-size="10">4x16xf32</font>>];
// CHECK: label="@reshape_between"
// CHECK-NOT: cluster
// CHECK: <b>nn.reshape</b>
// CHECK: }
// CHECK-DAG: [[X]] -> [[MM]] [label="4x8xf32"];
// CHECK-DAG: [[W]] -> [[MM]] [label="8x16xf32"];
// CHECK-DAG: [[MM]] -> [[ADD]] [label="4x16xf32"];
// CHECK-DAG: [[ADD]] -> [[RELU]] [label="4x16xf32"];
// CHECK-DAG: [[RELU]] -> [[RESULT]] [label="4x16xf32"];

// STDIN: label=<%arg0<br/><font point-size="10">4x8xf32</font>>
// STDIN: label=<%arg1<br/><font point-size="10">8x16xf32</font>>

// MARKED: label="@matmul_bias_relu"
// MARKED: label="fusion_0 · contraction"
// MARKED: <b>linalg.matmul</b>

func.func @matmul_bias_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = "nn.add"(%m, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = "nn.relu"(%a) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A lone op between nothing to fuse: no cluster.
func.func @reshape_between(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %r = "nn.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}
