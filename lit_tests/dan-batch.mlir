// RUN: rm -rf %t && dan-batch %s -p mpas,dlr,cpe -o %t -j 1 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s --input-file=%t/summary.csv --check-prefix=CSV
// RUN: filecheck %s --input-file=%t/dan-batch/pair_schedule.txt --check-prefix=SCHED
// RUN: dan-batch %s -p mpas,dlr,cpe -o %t -j 1 --resume 2>&1 | filecheck %s --check-prefix=RESUME
// RUN: cp /dev/null %t/dan-batch/pair_schedule.txt
// RUN: dan-batch %s -p mpas,dlr,cpe -o %t -j 1 --resume 2>&1 | filecheck %s --check-prefix=EMPTIED
// RUN: filecheck %s --input-file=%t/dan-batch/pair_schedule.txt --check-prefix=SCHED
// RUN: dan-batch %s -p mpas,dlr,cpe -o %t -j 1 --bounds --quiet
// RUN: filecheck %s --input-file=%t/summary.csv --check-prefix=BOUNDS
// RUN: not dan-batch %s %S/Inputs/does-not-exist.json -p mpas -o %t 2>&1 | filecheck %s --check-prefix=MISSING

// Test that dan-batch writes a kernel's plan files into a directory named after its
// input, one summary row with the replay's metrics (plus the run's time, which varies),
// a progress line per kernel when stderr is not a terminal, and that --resume keeps
// outputs made from the same input with the same pipeline. The L1 tile is loaded
// (100 cycles) and moved into L0A (10 cycles): makespan 110, peak L1+UB 128.

// LOG: dan-batch: [1/1] dan-batch ok {{[0-9.]+}} s
// LOG-NOT: error

// CSV: input,kernel,status,error,target,nodes,edges,valid,peak_l1_ub,tier_peaks,l0_rule,spill_count,extra_traffic,makespan,bound_peak_l1_ub,bound_extra_traffic,bound_spill_count,bound_makespan,gap_peak_l1_ub,gap_extra_traffic,gap_spill_count,gap_makespan,seconds,pass_seconds,resumed,warnings
// CSV-NEXT: dan-batch,pair,ok,,tiny,6,5,True,128,L1=128;UB=0;L0A=128;L0B=0;L0C=0,True,0,0,110,,,,,,,,,{{[0-9.]+}},{{[0-9.]+}},False,

// SCHED: 2
// SCHED-NEXT: 0
// SCHED-NEXT: 1
// SCHED-NEXT: 3
// SCHED-NEXT: 4
// SCHED-NEXT: 5

// RESUME: dan-batch: [1/1] dan-batch resumed

// An output emptied after the run differs from the size and SHA-256 the manifest
// records: --resume plans the kernel again and writes the schedule back.
// EMPTIED: dan-batch: [1/1] dan-batch ok {{[0-9.]+}} s

// With --bounds (planned again: the manifest was made without them), each metric's
// best lower bound (the 128-unit tile alone, no spills, the 110-cycle chain) and the
// gaps: none, the plan meets every bound.
// BOUNDS: dan-batch,pair,ok,,tiny,6,5,True,128,L1=128;UB=0;L0A=128;L0B=0;L0C=0,True,0,0,110,128,0,0,110,0.0,0.0,0.0,0.0,{{[0-9.]+}},{{[0-9.]+}},False,

// MISSING: dan-batch: error: no such file or directory: '{{.*}}does-not-exist.json'

dan.kernel @pair attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %l, %tl = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
  %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %a) after(%t1, %tl) {id = 3}
  %t4 = dan.free %a after(%t3) {id = 4}
  %t5 = dan.free %l after(%t3) {id = 5}
}
