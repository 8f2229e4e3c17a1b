// selftest.metal: kernels that check the harness, not the model (never sent to Metal).
//
// Invariant: the harness's barrier really waits for every thread, and reports a thread that
// exits before a barrier the others wait at. Mutation that would silently break it: a
// threadgroup_barrier that returns at once — selftest_reverse_through_threadgroup would then
// read slots that later threads have not written yet.

// Thread 0 leaves before the barrier the others wait at: a GPU may hang; the harness must
// report "barrier divergence".
kernel void selftest_early_exit_before_barrier(device float* x [[buffer(0)]],
                                               constant ElementwiseParams& p [[buffer(1)]],
                                               uint tid [[thread_index_in_threadgroup]]) {
    if (tid == 0) {
        return;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid < p.n) {
        x[tid] = 1.0f;
    }
}

// x[t] = x[threads-1-t] through threadgroup memory: right only if the barrier waits for all.
kernel void selftest_reverse_through_threadgroup(device float* x [[buffer(0)]],
                                                 constant ElementwiseParams& p [[buffer(1)]],
                                                 uint tid [[thread_index_in_threadgroup]],
                                                 uint threads [[threads_per_threadgroup]]) {
    threadgroup float slots[1024];
    slots[tid] = tid < p.n ? x[tid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint from = threads - 1 - tid;
    if (tid < p.n) {
        x[tid] = slots[from];
    }
}

// out[0:64] = a * b^T + c and out[64:128] its transpose, for one 8x8 simdgroup matrix of T:
// a loaded from device memory, b loaded transposed, c staged through threadgroup memory by
// the lanes (so the load must come after the barrier), the result stored both ways. Every
// simdgroup of the threadgroup computes it; simdgroup 0 stores it.
template <typename T>
inline void selftest_matrix_body(device T* out, device const T* a, device const T* b, device const T* c,
                                 uint lane, uint sg, TG_PARAM T* cs) {
    cs[lane] = c[lane];
    cs[lane + 32] = c[lane + 32];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_matrix<T, 8, 8> ma;
    simdgroup_matrix<T, 8, 8> mb;
    simdgroup_matrix<T, 8, 8> mc;
    simdgroup_load(ma, a, 8);
    simdgroup_load(mb, b, 8, ulong2(0), true);
    simdgroup_load(mc, cs, 8);
    simdgroup_matrix<T, 8, 8> md;
    simdgroup_multiply_accumulate(md, ma, mb, mc);
    if (sg == 0) {
        simdgroup_store(md, out, 8);
        simdgroup_store(md, out + 64, 8, ulong2(0), true);
    }
}

kernel void selftest_matrix_float(device float* out [[buffer(0)]], device const float* a [[buffer(1)]],
                                  device const float* b [[buffer(2)]], device const float* c [[buffer(3)]],
                                  constant ElementwiseParams& p [[buffer(4)]],
                                  uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float cs[64];
    selftest_matrix_body(out, a, b, c, lane, sg, cs);
}

kernel void selftest_matrix_half(device half* out [[buffer(0)]], device const half* a [[buffer(1)]],
                                 device const half* b [[buffer(2)]], device const half* c [[buffer(3)]],
                                 constant ElementwiseParams& p [[buffer(4)]],
                                 uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup half cs[64];
    selftest_matrix_body(out, a, b, c, lane, sg, cs);
}

kernel void selftest_matrix_bfloat(device bfloat* out [[buffer(0)]], device const bfloat* a [[buffer(1)]],
                                   device const bfloat* b [[buffer(2)]], device const bfloat* c [[buffer(3)]],
                                   constant ElementwiseParams& p [[buffer(4)]],
                                   uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup bfloat cs[64];
    selftest_matrix_body(out, a, b, c, lane, sg, cs);
}

// Broken on purpose: each lane loads from its own row (a lane-dependent source), which the GPU
// leaves undefined; the harness must report the lanes' disagreement.
kernel void selftest_matrix_lane_dependent_source(device float* x [[buffer(0)]],
                                                  constant ElementwiseParams& p [[buffer(1)]],
                                                  uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, x + (lane % 2) * 8, 8);
    simdgroup_store(m, x + 64, 8);
}

// Broken on purpose: the lanes stage a tile and load it without a threadgroup barrier; the
// loaded matrix then misses what later simdgroups wrote.
kernel void selftest_matrix_load_without_barrier(device float* x [[buffer(0)]],
                                                 constant ElementwiseParams& p [[buffer(1)]],
                                                 uint tid [[thread_index_in_threadgroup]],
                                                 uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[64];
    tile[tid] = x[tid];
    if (p.n != 0) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    simdgroup_float8x8 m;
    simdgroup_load(m, tile, 8);
    if (sg == 0) {
        simdgroup_store(m, x + 64, 8);
    }
}
