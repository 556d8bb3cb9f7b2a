// Test that every linalg example runs the whole pipeline under both drivers: the planned
// kernels replay valid, and the streams of lower-sync replay (one program per kernel).

// RUN: dan-opt %S/../examples/linalg_matmul.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe' | dan-replay - | filecheck %s --check-prefix=PLAN-MATMUL
// RUN: xdsl-opt %S/../examples/linalg_matmul.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-MATMUL
// RUN: dan-opt %S/../examples/linalg_matmul.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-MATMUL
// RUN: dan-opt %S/../examples/linalg_conv.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe' | dan-replay - | filecheck %s --check-prefix=PLAN-CONV
// RUN: xdsl-opt %S/../examples/linalg_conv.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-CONV
// RUN: dan-opt %S/../examples/linalg_conv.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-CONV
// RUN: dan-opt %S/../examples/linalg_elementwise.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe' | dan-replay - | filecheck %s --check-prefix=PLAN-ELEMENTWISE
// RUN: xdsl-opt %S/../examples/linalg_elementwise.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-ELEMENTWISE
// RUN: dan-opt %S/../examples/linalg_elementwise.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-ELEMENTWISE
// RUN: dan-opt %S/../examples/linalg_attention.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe' | dan-replay - | filecheck %s --check-prefix=PLAN-ATTENTION
// RUN: xdsl-opt %S/../examples/linalg_attention.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-ATTENTION
// RUN: dan-opt %S/../examples/linalg_attention.mlir -p 'convert-linalg-to-dan,mpas,dlr,cpe,lower-sync' | dan-replay - | filecheck %s --check-prefix=SYNC-ATTENTION

// PLAN-MATMUL: kernel matmul_matmul0: valid
// SYNC-MATMUL: // sync @matmul_matmul0: makespan 164267,
// PLAN-CONV: kernel convs_conv0: valid
// SYNC-CONV: // sync @convs_conv0: makespan
// PLAN-ELEMENTWISE: kernel chain_vector0: valid
// SYNC-ELEMENTWISE: // sync @chain_vector0: makespan
// PLAN-ATTENTION: kernel attention_attention0: valid
// SYNC-ATTENTION: // sync @attention_attention0: makespan
