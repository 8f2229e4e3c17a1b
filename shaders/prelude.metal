// prelude.metal: shared by every kernel family; shaders.Library puts it first.
//
// Invariant: weights are widened to float exactly (F32 as is, BF16 as the top half of a
// float, F16 as IEEE half) under the dtype codes shaders.DType uses (F32=0, BF16=1, F16=2).
// Mutation that would silently break it: swapping two dtype codes here or in dispatch.go —
// BF16 bytes read as F16 still give finite, plausible numbers.
#include <metal_stdlib>
using namespace metal;

// MUTANT(name) is false on the GPU. The C++ harness defines it to select one deliberately
// broken variant at a time, to prove that its comparisons catch that mistake.
#ifndef MUTANT
#define MUTANT(name) false
#endif

// TG_PARAM qualifies a threadgroup pointer parameter. (The harness maps threadgroup arrays
// to statics, which a parameter cannot be, so it defines TG_PARAM empty.)
#ifndef TG_PARAM
#define TG_PARAM threadgroup
#endif

constant constexpr uint DTYPE_F32 = 0;
constant constexpr uint DTYPE_BF16 = 1;
constant constexpr uint DTYPE_F16 = 2;

// load_weight widens element i of a weight of the given dtype that starts at base.
// The binding offset of base is a multiple of the element size (checked on the host).
inline float load_weight(device const uchar* base, uint dtype, uint i) {
    if (dtype == DTYPE_BF16) {
        return float(((device const bfloat*)base)[i]);
    }
    if (dtype == DTYPE_F16) {
        return float(((device const half*)base)[i]);
    }
    return ((device const float*)base)[i];
}
