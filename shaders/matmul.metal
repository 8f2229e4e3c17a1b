// matmul.metal: y[r,o] = sum_i x[r,i] * W[o,i] + bias[o], W PyTorch [out,in] in F32, BF16 or
// F16, widened to float as it is loaded; accumulation in float, in order of i.
//
// Invariant: every k-tile is visited, the last partial one included, with out-of-range
// elements loaded as 0. Mutation that would silently break it: stopping at the last whole
// tile (DROP_K_TAIL) — every model dimension is a multiple of 16, so only odd shapes notice.

struct MatMulParams {
    uint rows;
    uint in_dim;   // x columns, W columns
    uint out_dim;  // y columns, W rows
    uint has_bias;
    uint bias_dtype;
};

// A threadgroup of 16x16 threads computes a 64x64 tile of y; each thread 4x4 outputs at
// rows t.y + 16a and outputs t.x + 16b. K advances 16 at a time through threadgroup memory.
constant constexpr uint MM_TILE = 64;
constant constexpr uint MM_K = 16;
constant constexpr uint MM_THREADS = 256;

template <typename W>
inline void matmul_tiled(device float* y, device const float* x, device const W* w,
                         device const uchar* bias, constant MatMulParams& p, uint2 group, uint2 t,
                         TG_PARAM float* xs, TG_PARAM float* ws) {
    const uint row0 = group.y * MM_TILE;
    const uint col0 = group.x * MM_TILE;
    const uint lid = t.y * 16 + t.x;
    float acc[4][4];
    for (uint a = 0; a < 4; ++a) {
        for (uint b = 0; b < 4; ++b) {
            acc[a][b] = 0.0f;
        }
    }
    const uint k_end = MUTANT(DROP_K_TAIL) ? p.in_dim / MM_K * MM_K : p.in_dim;
    for (uint k0 = 0; k0 < k_end; k0 += MM_K) {
        // xs[r][kk] = x[row0+r, k0+kk]; ws[c][kk] = W[col0+c, k0+kk]; both [MM_TILE][MM_K+1].
        for (uint e = lid; e < MM_TILE * MM_K; e += MM_THREADS) {
            const uint r = e / MM_K;
            const uint kk = e % MM_K;
            const uint k = k0 + kk;
            const bool k_ok = k < p.in_dim;
            xs[r * (MM_K + 1) + kk] = (k_ok && row0 + r < p.rows) ? x[(row0 + r) * p.in_dim + k] : 0.0f;
            ws[r * (MM_K + 1) + kk] = (k_ok && col0 + r < p.out_dim) ? float(w[(col0 + r) * p.in_dim + k]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < MM_K; ++kk) {
            float xv[4];
            float wv[4];
            for (uint a = 0; a < 4; ++a) {
                xv[a] = xs[(t.y + 16 * a) * (MM_K + 1) + kk];
                wv[a] = ws[(t.x + 16 * a) * (MM_K + 1) + kk];
            }
            for (uint a = 0; a < 4; ++a) {
                for (uint b = 0; b < 4; ++b) {
                    acc[a][b] = fma(xv[a], wv[b], acc[a][b]);
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint a = 0; a < 4; ++a) {
        const uint r = row0 + t.y + 16 * a;
        for (uint b = 0; b < 4; ++b) {
            const uint o = col0 + t.x + 16 * b;
            if (r < p.rows && o < p.out_dim) {
                const float bo = p.has_bias != 0 ? load_weight(bias, p.bias_dtype, o) : 0.0f;
                y[r * p.out_dim + o] = acc[a][b] + bo;
            }
        }
    }
}

kernel void matmul_f32(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                       device const float* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                       constant MatMulParams& p [[buffer(4)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint2 t [[thread_position_in_threadgroup]]) {
    threadgroup float xs[MM_TILE * (MM_K + 1)];
    threadgroup float ws[MM_TILE * (MM_K + 1)];
    matmul_tiled(y, x, w, bias, p, group, t, xs, ws);
}

kernel void matmul_bf16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                        device const bfloat* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                        constant MatMulParams& p [[buffer(4)]],
                        uint2 group [[threadgroup_position_in_grid]],
                        uint2 t [[thread_position_in_threadgroup]]) {
    threadgroup float xs[MM_TILE * (MM_K + 1)];
    threadgroup float ws[MM_TILE * (MM_K + 1)];
    matmul_tiled(y, x, w, bias, p, group, t, xs, ws);
}

kernel void matmul_f16(device float* y [[buffer(0)]], device const float* x [[buffer(1)]],
                       device const half* w [[buffer(2)]], device const uchar* bias [[buffer(3)]],
                       constant MatMulParams& p [[buffer(4)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint2 t [[thread_position_in_threadgroup]]) {
    threadgroup float xs[MM_TILE * (MM_K + 1)];
    threadgroup float ws[MM_TILE * (MM_K + 1)];
    matmul_tiled(y, x, w, bias, p, group, t, xs, ws);
}
