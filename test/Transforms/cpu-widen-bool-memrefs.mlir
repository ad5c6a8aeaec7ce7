// RUN: lamina-opt %s --split-input-file --verify-diagnostics --cpu-widen-bool-memrefs | FileCheck %s

// A load from an i1 buffer reads a byte and truncates it.
// CHECK-LABEL: func.func @select_on_bool_input
// CHECK-SAME: (%[[C:.+]]: memref<4xi8>, %[[X:.+]]: memref<4xf32>, %[[Y:.+]]: memref<4xf32>, %[[OUT:.+]]: memref<4xf32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to
// CHECK: %[[BYTE:.+]] = memref.load %[[C]][%[[I]]] : memref<4xi8>
// CHECK: %[[BIT:.+]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK-DAG: %[[A:.+]] = memref.load %[[X]][%[[I]]] : memref<4xf32>
// CHECK-DAG: %[[B:.+]] = memref.load %[[Y]][%[[I]]] : memref<4xf32>
// CHECK: %[[R:.+]] = arith.select %[[BIT]], %[[A]], %[[B]] : f32
// CHECK: memref.store %[[R]], %[[OUT]][%[[I]]] : memref<4xf32>
// CHECK-NOT: i1>
func.func @select_on_bool_input(%arg0: memref<4xi1>, %arg1: memref<4xf32>, %arg2: memref<4xf32>, %arg3: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %arg4 = %c0 to %c4 step %c1 {
    %0 = memref.load %arg0[%arg4] : memref<4xi1>
    %1 = memref.load %arg1[%arg4] : memref<4xf32>
    %2 = memref.load %arg2[%arg4] : memref<4xf32>
    %3 = arith.select %0, %1, %2 : f32
    memref.store %3, %arg3[%arg4] : memref<4xf32>
  }
  return
}

// -----

// A store into an i1 buffer extends the bit to a byte.
// CHECK-LABEL: func.func @compare_into_bool_output
// CHECK-SAME: %[[OUT:[^ ]+]]: memref<4xi8>)
// CHECK: %[[BIT:.+]] = arith.cmpf ogt
// CHECK: %[[BYTE:.+]] = arith.extui %[[BIT]] : i1 to i8
// CHECK: memref.store %[[BYTE]], %[[OUT]][%{{.+}}] : memref<4xi8>
func.func @compare_into_bool_output(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %arg2: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %arg3 = %c0 to %c4 step %c1 {
    %0 = memref.load %arg0[%arg3] : memref<4xf32>
    %1 = memref.load %arg1[%arg3] : memref<4xf32>
    %2 = arith.cmpf ogt, %0, %1 : f32
    memref.store %2, %arg2[%arg3] : memref<4xi1>
  }
  return
}

// -----

// Constant i1 buffers become bytes, element by element or as a splat.
// CHECK-DAG: memref.global "private" constant @mask : memref<4xi8> = dense<[1, 0, 1, 1]>
// CHECK-DAG: memref.global "private" constant @ones : memref<8xi8> = dense<1>
// CHECK-LABEL: func.func @bool_constants
// CHECK-SAME: -> memref<8xi8>
// CHECK-DAG: %[[MASK:.+]] = memref.get_global @mask : memref<4xi8>
// CHECK-DAG: %[[ONES:.+]] = memref.get_global @ones : memref<8xi8>
// CHECK: %[[BYTE:.+]] = memref.load %[[MASK]]
// CHECK: arith.trunci %[[BYTE]] : i8 to i1
// CHECK: return %[[ONES]] : memref<8xi8>
memref.global "private" constant @mask : memref<4xi1> = dense<[true, false, true, true]>
memref.global "private" constant @ones : memref<8xi1> = dense<true>
func.func @bool_constants(%i: index) -> memref<8xi1> {
  %m = memref.get_global @mask : memref<4xi1>
  %o = memref.get_global @ones : memref<8xi1>
  %b = memref.load %m[%i] : memref<4xi1>
  return %o : memref<8xi1>
}

// -----

// Ops that only pass an i1 buffer on get the widened type, declarations too.
// CHECK-LABEL: func.func private @consume(memref<8xi8>) -> memref<8xi8>
// CHECK-LABEL: func.func @pass_through
// CHECK: %[[A:.+]] = memref.alloc() : memref<8xi8>
// CHECK: %[[B:.+]] = call @consume(%[[A]]) : (memref<8xi8>) -> memref<8xi8>
// CHECK: memref.subview %[[B]][2] [4] [1] : memref<8xi8> to memref<4xi8, strided<[1], offset: 2>>
// CHECK: memref.dealloc %[[A]] : memref<8xi8>
// CHECK-NOT: i1>
func.func private @consume(memref<8xi1>) -> memref<8xi1>
func.func @pass_through() {
  %a = memref.alloc() : memref<8xi1>
  %b = func.call @consume(%a) : (memref<8xi1>) -> memref<8xi1>
  %s = memref.subview %b[2] [4] [1] : memref<8xi1> to memref<4xi1, strided<[1], offset: 2>>
  memref.dealloc %a : memref<8xi1>
  return
}

// -----

// Buffers of other element types and i1 values outside buffers are left alone.
// CHECK-LABEL: func.func @no_bool_buffers
// CHECK-SAME: (%{{.+}}: memref<4xf32>, %{{.+}}: memref<4xi8>, %{{.+}}: i1)
// CHECK-NOT: arith.trunci
// CHECK-NOT: arith.extui
// CHECK: return
func.func @no_bool_buffers(%x: memref<4xf32>, %y: memref<4xi8>, %flag: i1) -> i1 {
  %c0 = arith.constant 0 : index
  %0 = memref.load %x[%c0] : memref<4xf32>
  %1 = memref.load %y[%c0] : memref<4xi8>
  memref.store %0, %x[%c0] : memref<4xf32>
  memref.store %1, %y[%c0] : memref<4xi8>
  return %flag : i1
}

// -----

// Vector transfers cannot read i1 elements from bytes: reported at the op.
func.func @vector_read_of_bools(%m: memref<8xi1>) -> vector<8xi1> {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  // expected-error @+1 {{'vector.transfer_read' reads or writes i1 elements of a buffer; only memref.load and memref.store can (vectorize i1 ops as i8)}}
  %v = vector.transfer_read %m[%c0], %false : memref<8xi1>, vector<8xi1>
  return %v : vector<8xi1>
}
