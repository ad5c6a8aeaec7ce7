// RUN: lamina-opt %s --split-input-file --cpu-dynamic-thread-schedule | FileCheck %s
// RUN: lamina-opt %s --split-input-file --convert-scf-to-openmp --cpu-dynamic-thread-schedule | FileCheck %s --check-prefix=FROM-SCF

// A worksharing loop with OpenMP's default (static) schedule gets the
// guided one; its iterations and body stay as they were.
// CHECK-LABEL: func.func @default_schedule
// CHECK: omp.parallel
// CHECK-NEXT: omp.wsloop schedule(guided) {
// CHECK-NEXT: omp.loop_nest (%[[I:.+]]) : index = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[%[[I]]] : memref<64xf32>
func.func @default_schedule(%out: memref<64xf32>, %value: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
        memref.store %value, %out[%i] : memref<64xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A loop whose schedule is stated keeps it.
// CHECK-LABEL: func.func @stated_schedule
// CHECK: omp.wsloop schedule(static) {
func.func @stated_schedule(%out: memref<64xf32>, %value: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
        memref.store %value, %out[%i] : memref<64xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A parallel loop as the CPU pipeline has it before the OpenMP
// conversion: each of its loops is handed out in guided chunks.
// FROM-SCF-LABEL: func.func @from_scf_parallel
// FROM-SCF: omp.wsloop schedule(guided)
// FROM-SCF-NOT: omp.wsloop {
func.func @from_scf_parallel(%out: memref<64xf32>, %value: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %value, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// Sequential code has no worksharing loop, and is left alone.
// CHECK-LABEL: func.func @sequential
// CHECK-NOT: omp.
func.func @sequential(%out: memref<64xf32>, %value: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    memref.store %value, %out[%i] : memref<64xf32>
  }
  return
}
