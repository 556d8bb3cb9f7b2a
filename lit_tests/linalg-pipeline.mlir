// RUN: xdsl-opt %s -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | filecheck %s
// RUN: dan-opt %s -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | filecheck %s
// RUN: dan-opt %s -p 'canonicalize,cse,dce,convert-linalg-to-dan,canonicalize,cse,dce,mpas,dlr,cpe' -o %t.mlir
// RUN: dan-replay %t.mlir | filecheck %s --check-prefix=REPLAY
// RUN: rm -rf %t.plan && dan-opt %s -p 'convert-linalg-to-dan,mpas,dlr,cpe' -t plan -o %t.plan
// RUN: ls %t.plan | filecheck %s --check-prefix=PLAN
// RUN: dan-opt %s -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC

// Test the whole path from linalg to synchronized streams under both drivers: every
// kernel the lowering makes is planned and lowered to a dan_sync.program, the function
// keeps a dan.launch of each, stock passes run before and after the lowering, every
// kernel replays valid, and -t plan writes each kernel's plan files.

// CHECK:      dan_sync.program @f_matmul0
// CHECK:      dan_sync.program @f_vector0
// CHECK:      func.func @f
// CHECK-NEXT:   dan.launch @f_matmul0(%a, %b, %c) {lowered = "linalg.matmul"}
// CHECK-NEXT:   dan.launch @f_vector0(%c, %d) {lowered = "linalg.exp"}

// REPLAY: kernel f_matmul0: valid
// REPLAY: kernel f_vector0: valid

// PLAN: f_matmul0_memory.txt
// PLAN: f_matmul0_schedule.txt
// PLAN: f_matmul0_spill.txt
// PLAN: f_vector0_memory.txt
// PLAN: f_vector0_schedule.txt
// PLAN: f_vector0_spill.txt

// SYNC: // sync @f_matmul0: makespan
// SYNC: // sync @f_vector0: makespan

func.func @f(%a: memref<16x24xf16>, %b: memref<24x16xf16>, %c: memref<16x16xf16>, %d: memref<16x16xf16>) {
  linalg.matmul ins(%a, %b : memref<16x24xf16>, memref<24x16xf16>) outs(%c : memref<16x16xf16>)
  linalg.exp ins(%c : memref<16x16xf16>) outs(%d : memref<16x16xf16>)
  return
}
