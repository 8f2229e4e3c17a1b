// matmul.metal: y[r,o] = sum_i x[r,i] * W[o,i] + bias[o], W PyTorch [out,in] in F32, BF16 or
// F16 read in place (widened to float exactly as it is staged), then the epilogue
// (matmul_epilogue.metal: bias, the GELU, store y, residual += y). Accumulation in float on
// simdgroup matrices. A GPU whose compiler rejects this file, or that cannot make a pipeline
// of one of its kernels, runs matmul_scalar.metal's kernels instead (the same buffers, params
// and epilogue).
//
// Invariant: every k-tile is visited, the last partial one included, with out-of-range
// elements staged as 0. Mutation that would silently break it: stopping at the last whole
// tile (DROP_K_TAIL) — every model dimension is a multiple of 32, so only odd shapes notice.

// A threadgroup of 4 simdgroups computes a BM x 64 tile of y (BM = 64, or 32 for grids too
// small to fill a big GPU: the `_m32` kernels); simdgroup s owns rows (BM/2)*(s/2).. and
// outputs 32*(s%2).., (BM/16) x 4 simdgroup matrices of 8x8. K advances 32 at a time: all 128
// threads stage x [BM][32] and W [64][32] (rows padded to MM_LD floats against bank
// conflicts) in threadgroup memory, then each simdgroup multiplies its row tiles by its 4
// column tiles over the 4 k-steps of 8 (W's tile read transposed: W is [out][in]).
constant constexpr uint MM_TILE = 64;  // outputs per threadgroup, and rows at BM = 64
constant constexpr uint MM_K = 32;
constant constexpr uint MM_LD = MM_K + 4;
constant constexpr uint MM_THREADS = 128;

// mm_stage copies rows [r0, r0+n) x columns [k0, k0+32) of a [rows][cols] matrix into dst
// ([n][MM_LD]) as float, zero outside it.
template <typename T>
inline void mm_stage(TG_PARAM float* dst, device const T* src, uint r0, uint n, uint rows, uint k0, uint cols, uint tid) {
    for (uint e = tid; e < n * MM_K; e += MM_THREADS) {
        const uint r = r0 + e / MM_K;
        const uint k = k0 + e % MM_K;
        dst[(e / MM_K) * MM_LD + e % MM_K] = (r < rows && k < cols) ? float(src[r * cols + k]) : 0.0f;
    }
}

// tile holds (BM + 64) * MM_LD floats: the x and W stages, then the BM x 64 output tile.
template <uint BM, typename W>
inline void matmul_simd(device float* y, device const float* x, device const W* w, device const uchar* bias,
                        device float* residual, constant MatMulParams& p, uint2 group, uint tid, uint sg,
                        TG_PARAM float* tile) {
    const uint row0 = group.y * BM;
    const uint col0 = group.x * MM_TILE;
    const uint sr = (sg / 2) * (BM / 2);  // this simdgroup's rows and columns in the tile
    const uint sc = (sg % 2) * 32;
    TG_PARAM float* xs = tile;
    TG_PARAM float* ws = tile + BM * MM_LD;
    simdgroup_float8x8 acc[BM / 16][4];
    for (uint i = 0; i < BM / 16; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        }
    }
    const uint k_end = MUTANT(DROP_K_TAIL) ? p.in_dim / MM_K * MM_K : p.in_dim;
    for (uint k0 = 0; k0 < k_end; k0 += MM_K) {
        mm_stage(xs, x, row0, BM, p.rows, k0, p.in_dim, tid);
        mm_stage(ws, w, col0, MM_TILE, p.out_dim, k0, p.in_dim, tid);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < MM_K; kk += 8) {
            simdgroup_float8x8 a[BM / 16];
            simdgroup_float8x8 b[4];
            for (uint i = 0; i < BM / 16; ++i) {
                simdgroup_load(a[i], xs + (sr + 8 * i) * MM_LD + kk, MM_LD);
            }
            for (uint j = 0; j < 4; ++j) {
                simdgroup_load(b[j], ws + (sc + 8 * j) * MM_LD + kk, MM_LD, ulong2(0), true);
            }
            for (uint i = 0; i < BM / 16; ++i) {
                for (uint j = 0; j < 4; ++j) {
                    simdgroup_multiply_accumulate(acc[i][j], a[i], b[j], acc[i][j]);
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);  // before the next stage overwrites xs, ws
    }

    // The epilogue, through threadgroup memory ([BM][64] over the stages), row-major so the
    // threads' stores to y are consecutive.
    for (uint i = 0; i < BM / 16; ++i) {
        for (uint j = 0; j < 4; ++j) {
            simdgroup_store(acc[i][j], tile + (sr + 8 * i) * MM_TILE + sc + 8 * j, MM_TILE);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = tid; e < BM * MM_TILE; e += MM_THREADS) {
        const uint r = row0 + e / MM_TILE;
        const uint o = col0 + e % MM_TILE;
        if (r < p.rows && o < p.out_dim) {
            mm_epilogue(y, residual, bias, p, r, o, tile[e]);
        }
    }
}

kernel void matmul_f32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                       device const float* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                       device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(64 + MM_TILE) * MM_LD];
    matmul_simd<64>(y, x, w, bias, residual, p, group, tid, sg, tile);
}

kernel void matmul_bf16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                        device const bfloat* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                        device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                        uint2 group [[threadgroup_position_in_grid]],
                        uint tid [[thread_index_in_threadgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(64 + MM_TILE) * MM_LD];
    matmul_simd<64>(y, x, w, bias, residual, p, group, tid, sg, tile);
}

kernel void matmul_f16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                       device const half* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                       device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(64 + MM_TILE) * MM_LD];
    matmul_simd<64>(y, x, w, bias, residual, p, group, tid, sg, tile);
}

kernel void matmul_f32_m32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                           device const float* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                           device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(32 + MM_TILE) * MM_LD];
    matmul_simd<32>(y, x, w, bias, residual, p, group, tid, sg, tile);
}

kernel void matmul_bf16_m32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                            device const bfloat* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                            device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                            uint2 group [[threadgroup_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(32 + MM_TILE) * MM_LD];
    matmul_simd<32>(y, x, w, bias, residual, p, group, tid, sg, tile);
}

kernel void matmul_f16_m32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                           device const half* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                           device float* residual [[buffer(4)]], constant MatMulParams& p [[buffer(5)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[(32 + MM_TILE) * MM_LD];
    matmul_simd<32>(y, x, w, bias, residual, p, group, tid, sg, tile);
}
