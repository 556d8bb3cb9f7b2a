// RUN: xdsl-opt %s --split-input-file -p convert-linalg-to-dan 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.err
// RUN: dan-opt %s --split-input-file -p convert-linalg-to-dan 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: echo '{"name": "tiny", "capacity": {"L1": 64, "UB": 8, "L0A": 256, "L0B": 256, "L0C": 512}}' > %t.json
// RUN: xdsl-opt %s --split-input-file -p 'convert-linalg-to-dan{target="%t.json"}' 2>&1 >/dev/null | filecheck %s --check-prefix=TINY
// RUN: not dan-opt %s --split-input-file -p 'convert-linalg-to-dan{target=nowhere}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: dan-opt %s --split-input-file -p 'convert-linalg-to-dan{max-nodes=10}' 2>&1 >/dev/null | filecheck %s --check-prefix=MAX
// RUN: echo '{"name": "nol1", "tiers": ["L2", "UB", "L0A", "L0B", "L0C"], "capacity": {"L2": 4096, "UB": 1024, "L0A": 256, "L0B": 256, "L0C": 512}, "peak_tiers": ["L2", "UB"], "l0_tiers": ["L0A", "L0B", "L0C"]}' > %t.nol1.json
// RUN: dan-opt %s --split-input-file -p 'convert-linalg-to-dan{target="%t.nol1.json"}' 2>&1 >/dev/null | filecheck %s --check-prefix=NOL1

// Test that what the pass cannot lower stays as it is, marked `dan.not_lowered` with
// the reason, which a `remark:` line on stderr repeats (linalg.transpose prints no
// attributes: the remark is there): a dynamic shape, an op without a lowering, a fill
// initialising nothing that lowers, an element type without a cycle model, and (on a core whose L1 and UB hold almost
// nothing) a tile larger than its tier; a kernel over `max-nodes` stays too, and so does
// one whose family needs a tier the target lacks. Nothing is dropped; a bad target is a
// one-line error.

// CHECK:      func.func @dynamic
// CHECK-NEXT:   linalg.matmul {dan.not_lowered = "dynamic shape memref<?x8xf16> of operand A"}
// CHECK:      func.func @unsupported
// CHECK-NEXT:   linalg.transpose ins(%a:memref<8x4xf16>) outs(%b:memref<4x8xf16>) permutation = [1, 0]
// CHECK:      func.func @f64
// CHECK-NEXT:   linalg.add
// CHECK-SAME:     dan.not_lowered = "element type f64 of operand 0 has no cycle model"
// CHECK-NOT:  dan.kernel
// CHECK:      {{//}} {{-{5}$}}
// CHECK:      dan.kernel @small_vector0 attributes {target = #dan.target<contest>}

// REMARK: remark: linalg.matmul in @dynamic stays: dynamic shape memref<?x8xf16> of operand A
// REMARK: remark: linalg.transpose in @unsupported stays: unsupported op linalg.transpose
// REMARK: remark: linalg.add in @f64 stays: element type f64 of operand 0 has no cycle model
// REMARK: remark: linalg.fill in @small stays: a fill lowers only with the matmul, convolution or reduction that accumulates into it

// TINY: remark: linalg.exp in @small stays: 3 tiles of one element do not fit twice in UB of target 'tiny'
// TINY: remark: linalg.matmul in @small stays: a tile of 128 bytes does not fit L1 (64 bytes) of target 'tiny'

// TARGET: unknown target 'nowhere'

// MAX: remark: linalg.exp in @small stays: its kernel would have 16 nodes, over max-nodes=10

// NOL1: remark: linalg.matmul in @small stays: target 'nol1': node 1: unknown tier 'L1'
// MAX: remark: linalg.matmul in @small stays: its kernel would have 16 nodes, over max-nodes=10

func.func @dynamic(%a: memref<?x8xf16>, %b: memref<8x8xf16>, %c: memref<?x8xf16>) {
  linalg.matmul ins(%a, %b : memref<?x8xf16>, memref<8x8xf16>) outs(%c : memref<?x8xf16>)
  return
}

// -----

func.func @unsupported(%a: memref<8x4xf16>, %b: memref<4x8xf16>) {
  linalg.transpose ins(%a : memref<8x4xf16>) outs(%b : memref<4x8xf16>) permutation = [1, 0]
  return
}

// -----

func.func @f64(%a: memref<8xf64>, %b: memref<8xf64>, %c: memref<8xf64>) {
  linalg.add ins(%a, %b : memref<8xf64>, memref<8xf64>) outs(%c : memref<8xf64>)
  return
}

// -----

func.func @small(%a: memref<8x8xf16>, %b: memref<8x8xf16>, %c: memref<8x8xf16>) {
  %one = arith.constant 1.0 : f16
  linalg.fill ins(%one : f16) outs(%a : memref<8x8xf16>)
  linalg.exp ins(%a : memref<8x8xf16>) outs(%b : memref<8x8xf16>)
  linalg.matmul ins(%a, %b : memref<8x8xf16>, memref<8x8xf16>) outs(%c : memref<8x8xf16>)
  return
}
