// RUN: printf 'id,lower,upper,size\nb0,0,3,4\nb1,3,5,4\nb2,1,4,2\nb3,0,1,2\n' > %t.8.csv
// RUN: dan-pack %t.8.csv -o %t.8.out.csv 2>&1 | filecheck %s --check-prefix=SAY
// RUN: cat %t.8.out.csv | filecheck %s
// RUN: dan-pack --check %t.8.out.csv 2>&1 | filecheck %s --check-prefix=CHECKED
// RUN: printf 'id,lower,upper,size\n0,0,3,2\n1,1,4,2\n2,2,5,2\n' > %t.none.csv
// RUN: not dan-pack %t.none.csv --capacity 5 -o %t.none.out.csv 2>&1 | filecheck %s --check-prefix=NONE
// RUN: not ls %t.none.out.csv
// RUN: not dan-pack %t.none.csv 2>&1 | filecheck %s --check-prefix=CAP
// RUN: printf 'id,lower,upper,size,offset\n0,0,3,2,0\n1,1,4,2,1\n' > %t.bad.5.csv
// RUN: not dan-pack --check %t.bad.5.csv 2>&1 | filecheck %s --check-prefix=BAD

// Test that dan-pack reads MiniMalloc's CSV (capacity from NAME.CAPACITY.csv), writes a
// validated solution with an offset column that --check reads back, and that a problem
// with no layout, a missing capacity and an overlapping solution are one-line errors
// with nothing written.

// SAY: 4 buffers packed, peak 6 of 8 (groups: greedy-size 1;
// CHECK:      id,lower,upper,size,offset
// CHECK-NEXT: b0,0,3,4,
// CHECK-NEXT: b1,3,5,4,
// CHECK-NEXT: b2,1,4,2,
// CHECK-NEXT: b3,0,1,2,
// CHECKED: valid, 4 buffers, peak 6 of 8
// NONE: dan-pack: error: {{.*}}no layout exists (3 of 3 buffers unplaced; nothing written)
// CAP: dan-pack: error: {{.*}}give --capacity
// BAD: dan-pack: error: {{.*}}invalid solution (1 problems): buffers 0 and 1 overlap in time and address
