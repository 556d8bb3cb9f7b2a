// RUN: rm -rf %t && dan-export --format chrome-trace --flows -o %t %s | filecheck %s --check-prefix=FILES
// RUN: filecheck %s --input-file=%t/window.trace.json
// RUN: dan-replay %s | filecheck %s --check-prefix=PIPES
// RUN: not dan-export --format png --flows -o %t/bad %s 2>&1 | filecheck %s --check-prefix=BAD

// Test that the Chrome trace of a plan has one track per pipe in the simulator's lane
// order, one slice per node at the replay's times (1 cycle = 1 us) with its id,
// buffers and cycles, the bytes resident in UB as a counter, and with --flows one
// arrow per cross-pipe dependency: MTE2 -> CUBE and MTE1 -> CUBE for the two MMs,
// CUBE -> VECTOR for each V; dan-replay gives each pipe's busy cycles.

// FILES: {{.*}}window.trace.json

// CHECK: "time_unit": "1 cycle = 1 us"
// CHECK: {"args": {"name": "MTE1"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 10}
// CHECK: {"args": {"name": "MTE2"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 11}
// CHECK: {"args": {"name": "MTE3"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 12}
// CHECK: {"args": {"name": "CUBE"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 14}
// CHECK: {"args": {"name": "VECTOR"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 15}
// CHECK: {"args": {"name": "FIXP"}, "name": "thread_name", "ph": "M", "pid": 1, "tid": 13}
// CHECK-NEXT: {"args": {"sort_index": 5}, "name": "thread_sort_index", "ph": "M", "pid": 1, "tid": 13}
// CHECK-NEXT: {"args": {"buffers": ["1 (UB [300, 800))"], "cycles": 5, "id": 5}, "cat": "dma", "dur": 5, "name": "COPY_IN", "ph": "X", "pid": 1, "tid": 10, "ts": 0}
// CHECK-NEXT: {"args": {"buffers": ["0 (UB [0, 300))"], "cycles": 5, "id": 2}, "cat": "dma", "dur": 5, "name": "COPY_IN", "ph": "X", "pid": 1, "tid": 11, "ts": 0}
// CHECK-NEXT: {"args": {"buffers": ["0 (UB [0, 300))"], "cycles": 5, "id": 3}, "cat": "compute", "dur": 5, "name": "MM", "ph": "X", "pid": 1, "tid": 14, "ts": 5}
// CHECK-NEXT: {"args": {"buffers": ["1 (UB [300, 800))"], "cycles": 5, "id": 6}, "cat": "compute", "dur": 5, "name": "MM", "ph": "X", "pid": 1, "tid": 14, "ts": 10}
// CHECK-NEXT: {"args": {"buffers": ["0 (UB [0, 300))"], "cycles": 5, "id": 4}, "cat": "compute", "dur": 5, "name": "V", "ph": "X", "pid": 1, "tid": 15, "ts": 10}
// CHECK-NEXT: {"args": {"buffers": ["1 (UB [300, 800))"], "cycles": 5, "id": 7}, "cat": "compute", "dur": 5, "name": "V", "ph": "X", "pid": 1, "tid": 15, "ts": 15}
// CHECK-NEXT: {"args": {"bytes": 800}, "name": "UB resident", "ph": "C", "pid": 1, "ts": 0}
// CHECK-NEXT: {"args": {"bytes": 500}, "name": "UB resident", "ph": "C", "pid": 1, "ts": 15}
// CHECK-NEXT: {"args": {"bytes": 0}, "name": "UB resident", "ph": "C", "pid": 1, "ts": 20}
// CHECK-NEXT: {"cat": "dependency", "id": 0, "name": "MTE2 -> CUBE", "ph": "s", "pid": 1, "tid": 11, "ts": 2.5}
// CHECK-NEXT: {"bp": "e", "cat": "dependency", "id": 0, "name": "MTE2 -> CUBE", "ph": "f", "pid": 1, "tid": 14, "ts": 7.5}
// CHECK-NEXT: {"cat": "dependency", "id": 1, "name": "MTE1 -> CUBE", "ph": "s", "pid": 1, "tid": 10, "ts": 2.5}
// CHECK-NEXT: {"bp": "e", "cat": "dependency", "id": 1, "name": "MTE1 -> CUBE", "ph": "f", "pid": 1, "tid": 14, "ts": 12.5}
// CHECK-NEXT: {"cat": "dependency", "id": 2, "name": "CUBE -> VECTOR", "ph": "s", "pid": 1, "tid": 14, "ts": 7.5}
// CHECK-NEXT: {"bp": "e", "cat": "dependency", "id": 2, "name": "CUBE -> VECTOR", "ph": "f", "pid": 1, "tid": 15, "ts": 12.5}
// CHECK-NEXT: {"cat": "dependency", "id": 3, "name": "CUBE -> VECTOR", "ph": "s", "pid": 1, "tid": 14, "ts": 12.5}
// CHECK-NEXT: {"bp": "e", "cat": "dependency", "id": 3, "name": "CUBE -> VECTOR", "ph": "f", "pid": 1, "tid": 15, "ts": 17.5}
// CHECK-NEXT: ]}

// PIPES:      conflict-free: yes
// PIPES-NEXT: pipe busy:     MTE1 5 (25.0%), MTE2 5 (25.0%), MTE3 0 (0.0%), FIXP 0 (0.0%), CUBE 10 (50.0%), VECTOR 10 (50.0%) (busy cycles, share of the makespan)
// PIPES-NEXT: busiest idle:  CUBE idle 10 of 20 cycles (busy 10, 50.0%)
// PIPES-NEXT: idle causes:   CUBE 5 before its first node, 5 after its last; between nodes waiting on none

// BAD: dan-export: error: --flows goes with --format chrome-trace

dan.kernel @window attributes {target = #dan.target<contest>} {
  %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 300>
  %b1, %t1 = dan.alloc {id = 1, buf = 1, offset = 300} : !dan.buf<UB, 500>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(5) bufs(%b0) after(%t0) {id = 2}
  %t5 = dan.dma "COPY_IN" on MTE1 cycles(5) bufs(%b1) after(%t1) {id = 5}
  %t3 = dan.compute "MM" on CUBE cycles(5) bufs(%b0) after(%t2, %t0) {id = 3}
  %t6 = dan.compute "MM" on CUBE cycles(5) bufs(%b1) after(%t5, %t1) {id = 6}
  %t4 = dan.compute "V" on VECTOR cycles(5) bufs(%b0) after(%t3, %t0) {id = 4}
  %t7 = dan.compute "V" on VECTOR cycles(5) bufs(%b1) after(%t6, %t1) {id = 7}
  %t8 = dan.free %b0 after(%t2, %t3, %t4) {id = 8}
  %t9 = dan.free %b1 after(%t5, %t6, %t7) {id = 9}
}
