// RUN: not dan-opt %s --split-input-file -p lower-sync 2>&1 | filecheck %s
// RUN: not dan-opt %s -p 'lower-sync{event-ids=-1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not dan-opt %s -p 'lower-sync{event-ids=99999999999}' 2>&1 | filecheck %s --check-prefix=HUGE

// Test that a bad event-id count is refused when the pipeline is parsed: the option
// takes what a target file takes (1 to 65536), or 0 for the target's.
// OPTION: dan-opt: error: bad pass pipeline 'lower-sync{event-ids=-1}': option 'event-ids' of pass 'lower-sync': must be from 0 to 65536 (0: the target's), got -1
// HUGE: dan-opt: error: bad pass pipeline 'lower-sync{event-ids=99999999999}': option 'event-ids' of pass 'lower-sync': must be from 0 to 65536 (0: the target's), got 99999999999

// Test that a plan without a layout is refused: the streams need addresses.
// CHECK: error: chunk 1: lower-sync: kernel @orderonly: the plan has no layout (run a layout pass such as dlr first)

dan.kernel @orderonly {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %t2 = dan.free %a after(%t1) {id = 2}
}

// -----

// Test that a plan the replay rejects is refused with its first broken invariant.
// CHECK: error: chunk 2: lower-sync: kernel @overlap: plan is not valid (overlap): ALLOC 1: buffer 1 at [32, 96) overlaps buffer 0 at [0, 64) in UB

dan.kernel @overlap {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 32} : !dan.buf<UB, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t2 = dan.free %a after(%t1) {id = 3}
  %t3 = dan.free %b after(%t1) {id = 4}
}

// -----

// Test that the program verifier finds a wait no set matches.
// CHECK: error: chunk 3: dan_sync.program @unmatched: event 0 of MTE2->VECTOR is waited for with no matching set (1 unmatched)

dan_sync.program @unmatched event_ids(8) {
  dan_sync.stream "VECTOR" {
    dan_sync.wait_flag MTE2 -> VECTOR event 0
    dan_sync.exec "EXP" id 1 cycles 5 (UB[0, 64) buf 0)
  }
}

// -----

// Test that an id set again while its first flag is outstanding is an error.
// CHECK: error: chunk 4: dan_sync.program @twice: stream MTE2 item 1: event 0 of MTE2->VECTOR set again while outstanding

dan_sync.program @twice event_ids(8) {
  dan_sync.stream "MTE2" {
    dan_sync.set_flag MTE2 -> VECTOR event 0
    dan_sync.set_flag MTE2 -> VECTOR event 0
  }
  dan_sync.stream "VECTOR" {
    dan_sync.wait_flag MTE2 -> VECTOR event 0
    dan_sync.wait_flag MTE2 -> VECTOR event 0
  }
}

// -----

// Test that streams waiting for each other are a deadlock.
// CHECK: error: chunk 5: dan_sync.program @deadlock: the streams deadlock: waits never satisfied at MTE2 item 0, VECTOR item 0

dan_sync.program @deadlock event_ids(8) {
  dan_sync.stream "MTE2" {
    dan_sync.wait_flag VECTOR -> MTE2 event 0
    dan_sync.set_flag MTE2 -> VECTOR event 0
  }
  dan_sync.stream "VECTOR" {
    dan_sync.wait_flag MTE2 -> VECTOR event 0
    dan_sync.set_flag VECTOR -> MTE2 event 0
  }
}

// -----

// Test that an event id must be below the program's limit.
// CHECK: error: chunk 6: dan_sync.program @range: stream MTE2 item 0: set_flag MTE2 -> VECTOR event 2: event id out of range (limit 2)

dan_sync.program @range event_ids(2) {
  dan_sync.stream "MTE2" {
    dan_sync.set_flag MTE2 -> VECTOR event 2
  }
  dan_sync.stream "VECTOR" {
    dan_sync.wait_flag MTE2 -> VECTOR event 2
  }
}

// -----

// Test that a wait sits in its destination pipe's stream.
// CHECK: error: chunk 7: dan_sync.wait_flag MTE2 -> VECTOR event 0: belongs in the VECTOR stream, not in MTE2

dan_sync.program @side event_ids(2) {
  dan_sync.stream "MTE2" {
    dan_sync.wait_flag MTE2 -> VECTOR event 0
  }
}

// -----

// Test that a pipe has one stream.
// CHECK: error: chunk 8: dan_sync.program @two: a second stream 'MTE2' (pipes: MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR)

dan_sync.program @two event_ids(2) {
  dan_sync.stream "MTE2" {
  }
  dan_sync.stream "MTE2" {
  }
}
