// matmul_scalar.metal: the fallback of matmul.metal — the same product, buffers, params and
// epilogue (matmul_epilogue.metal) on scalar FMAs only: no simdgroup matrix, no simd
// function, so a Metal compiler or GPU that refuses the simdgroup-matrix kernels still runs
// every matmul. The Metal backend compiles it in a library of its own and encodes it where the
// simdgroup kernel of a weight dtype has no pipeline (and in the conformance table's
// fallback cases, so a Mac checks it too).
//
// A threadgroup of 16 x 16 threads computes a 64 x 64 tile of y, each thread a 4 x 4 block
// (rows tr, tr+16, tr+32, tr+48; columns tc, tc+16, ...: a simdgroup's lanes read 2 x values
// and 16 consecutive W rows from threadgroup memory per k). K advances 16 at a time: all 256
// threads stage x [64][16] and W [64][16] (rows padded to MMS_LD floats) in threadgroup memory,
// W widened exactly as it is staged. Each output is one float accumulator, fma over k in order.
//
// Invariant: every stage is read by every thread before any thread stages the next one over
// it (the barrier after the k loop), and every k-tile is visited, the last partial one
// included. Mutations that would silently break it: dropping that barrier
// (MMS_NO_STAGE_BARRIER) — a fast simdgroup overwrites x and W while a slow one still reads
// them: right on one k step, wrong from in_dim > 16 on, and only under some schedules on a
// GPU (the harness runs each simdgroup as far as it can, so it always shows); and the k tail
// dropped (DROP_K_TAIL, as in matmul.metal).

constant constexpr uint MMS_TILE = 64;  // outputs and rows per threadgroup
constant constexpr uint MMS_K = 16;
constant constexpr uint MMS_LD = MMS_K + 1;
constant constexpr uint MMS_SIDE = 16;  // threads per side: 16 x 16, 4 x 4 outputs each
constant constexpr uint MMS_THREADS = MMS_SIDE * MMS_SIDE;

// mms_stage copies rows [r0, r0+64) x columns [k0, k0+16) of a [rows][cols] matrix into dst
// ([64][MMS_LD]) as float, zero outside it.
template <typename T>
inline void mms_stage(TG_PARAM float* dst, device const T* src, uint r0, uint rows, uint k0, uint cols, uint tid) {
    for (uint e = tid; e < MMS_TILE * MMS_K; e += MMS_THREADS) {
        const uint r = r0 + e / MMS_K;
        const uint k = k0 + e % MMS_K;
        dst[(e / MMS_K) * MMS_LD + e % MMS_K] = (r < rows && k < cols) ? float(src[r * cols + k]) : 0.0f;
    }
}

// xs and ws hold 64 * MMS_LD floats each: the x and W stages.
template <typename W>
inline void matmul_scalar(device float* y, device const float* x, device const W* w, device const uchar* bias,
                          device float* residual, constant MatMulParams& p, uint2 group, uint tid,
                          TG_PARAM float* xs, TG_PARAM float* ws) {
    const uint row0 = group.y * MMS_TILE;
    const uint col0 = group.x * MMS_TILE;
    const uint tr = tid / MMS_SIDE;
    const uint tc = tid % MMS_SIDE;
    float acc[4][4];
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    const uint k_end = MUTANT(DROP_K_TAIL) ? p.in_dim / MMS_K * MMS_K : p.in_dim;
    for (uint k0 = 0; k0 < k_end; k0 += MMS_K) {
        mms_stage(xs, x, row0, p.rows, k0, p.in_dim, tid);
        mms_stage(ws, w, col0, p.out_dim, k0, p.in_dim, tid);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < MMS_K; ++kk) {
            float a[4];
            float b[4];
            for (uint i = 0; i < 4; ++i) {
                a[i] = xs[(tr + MMS_SIDE * i) * MMS_LD + kk];
                b[i] = ws[(tc + MMS_SIDE * i) * MMS_LD + kk];
            }
            for (uint i = 0; i < 4; ++i) {
                for (uint j = 0; j < 4; ++j) {
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
                }
            }
        }
        if (!MUTANT(MMS_NO_STAGE_BARRIER)) {
            threadgroup_barrier(mem_flags::mem_threadgroup);  // before the next stage overwrites xs, ws
        }
    }
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            const uint r = row0 + tr + MMS_SIDE * i;
            const uint o = col0 + tc + MMS_SIDE * j;
            if (r < p.rows && o < p.out_dim) {
                mm_epilogue(y, residual, bias, p, r, o, acc[i][j]);
            }
        }
    }
}

kernel void matmul_scalar_f32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                              device const float* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                              device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                              uint2 group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float xs[MMS_TILE * MMS_LD];
    threadgroup float ws[MMS_TILE * MMS_LD];
    matmul_scalar(y, x, w, bias, residual, p, group, tid, xs, ws);
}

kernel void matmul_scalar_bf16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                               device const bfloat* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                               device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                               uint2 group [[threadgroup_position_in_grid]],
                               uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float xs[MMS_TILE * MMS_LD];
    threadgroup float ws[MMS_TILE * MMS_LD];
    matmul_scalar(y, x, w, bias, residual, p, group, tid, xs, ws);
}

kernel void matmul_scalar_f16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                              device const half* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                              device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                              uint2 group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float xs[MMS_TILE * MMS_LD];
    threadgroup float ws[MMS_TILE * MMS_LD];
    matmul_scalar(y, x, w, bias, residual, p, group, tid, xs, ws);
}
