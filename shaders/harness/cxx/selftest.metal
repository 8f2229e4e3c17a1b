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
