// flash.metal: the flash attention kernels attention_hdN (simdgroup matrices, K/V tiles in
// threadgroup memory), a family of their own: Metal compiles it in a library apart from the
// scalar `attention` (attention.metal), whose AttentionParams it uses, so an Apple compiler that
// rejects this file leaves every head dim on the scalar kernel instead of leaving no Metal.
//
// attention_hdN (N = the head dim, a compile-time constant per kernel) computes what
// `attention` computes for BQ = 32 queries per threadgroup: 4 simdgroups of 8 query rows.
// Per tile of BK keys, staged with the matching V rows in threadgroup memory by all 128
// threads: S = Q K^T as (BK/8) 8x8 tiles per simdgroup (Q kept in registers as N/8 tiles),
// the online softmax in float on S in threadgroup memory (4 lanes per row: running maximum,
// exp after subtracting it, the sum), then O = diag(corr) O + P V with O in registers as N/8
// tiles. The rescale by diag(corr) is itself a matrix product, so no lane ever needs to know
// which elements of a simdgroup matrix it holds. O / l at the end, rows past the dispatch's
// queries never written.
//
// Invariant: keys are [seg_start, seg_end) only (masked to -inf past seg_end in the last
// tile, zero-filled in threadgroup memory so no NaN leaks through 0 * garbage), and the
// queries written are [q_begin, q_end) only: the host splits a segment's queries over
// several dispatches (and command buffers) so that none runs long enough for the GPU
// watchdog. Mutations that would silently break it: the two of `attention` (NO_SEGMENT_BOUND,
// NO_MAX_SUBTRACTION), FLASH_NO_RESCALE (skipping diag(corr) O: right whenever the first
// key tile holds each row's maximum, wrong otherwise) and FLASH_RESCALE_IF_ALL (the lazy
// rescale taken only when every row of the simdgroup found a new maximum: right for a
// simdgroup whose rows agree, wrong as soon as one row's maximum moves and another's not).

constant constexpr uint FLASH_QUERIES = 32;  // per threadgroup: 4 simdgroups x 8 rows
constant constexpr uint FLASH_THREADS = 128;

// flash_stage copies rows [r0, r0 + rows) of a head's hd columns (row stride stride) into
// dst [rows][HD], zero past row_end.
template <uint HD>
inline void flash_stage(TG_PARAM float* dst, device const float* src, uint r0, uint rows, uint row_end,
                        uint stride, uint col0, uint tid) {
    for (uint e = tid; e < rows * HD; e += FLASH_THREADS) {
        const uint r = r0 + e / HD;
        dst[e] = r < row_end ? src[r * stride + col0 + e % HD] : 0.0f;
    }
}

// flash_attention: kv holds 2*BK*HD floats (K tile, then V tile; the Q tile and the output
// tile at the start and the end), ss 32*BK (each simdgroup's 8 x BK scores), dg 4*64 (each
// simdgroup's 8x8 diagonal: zero but for the diagonal, written per tile).
template <uint HD, uint BK>
inline void flash_attention(device float* o, device const float* q, device const float* k, device const float* v,
                            constant AttentionParams& p, uint2 group, uint tid, uint sg, uint lane,
                            TG_PARAM float* kv, TG_PARAM float* ss, TG_PARAM float* dg) {
    const uint head = group.y;
    const uint col0 = head * HD;
    const uint q0 = p.q_begin + group.x * FLASH_QUERIES;
    TG_PARAM float* s = ss + sg * 8 * BK;
    TG_PARAM float* diag = dg + sg * 64;
    const uint row = lane / 4;   // the score row this lane works on
    const uint part = lane % 4;  // and its share of the row: columns part, part+4, ...

    flash_stage<HD>(kv, q, q0, FLASH_QUERIES, p.q_end, p.stride, col0, tid);
    diag[lane] = 0.0f;
    diag[lane + 32] = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 qm[HD / 8];
    simdgroup_float8x8 om[HD / 8];
    for (uint d = 0; d < HD / 8; ++d) {
        simdgroup_load(qm[d], kv + sg * 8 * HD + d * 8, HD);
        om[d] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // Q is in registers before K overwrites it

    const uint key_begin = MUTANT(NO_SEGMENT_BOUND) ? 0 : p.seg_start;
    const uint key_end = MUTANT(NO_SEGMENT_BOUND) ? p.seq : p.seg_end;
    float m = -INFINITY;  // running maximum of this lane's row
    float l = 0.0f;       // running sum of exp(score - m) of the row
    for (uint j0 = key_begin; j0 < key_end; j0 += BK) {
        flash_stage<HD>(kv, k, j0, BK, key_end, p.stride, col0, tid);
        flash_stage<HD>(kv + BK * HD, v, j0, BK, key_end, p.stride, col0, tid);
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // S = Q K^T: the tile of keys jj*8.. is K rows read transposed (8 dims x 8 keys).
        for (uint jj = 0; jj < BK / 8; ++jj) {
            simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
            for (uint d = 0; d < HD / 8; ++d) {
                simdgroup_float8x8 kt;
                simdgroup_load(kt, kv + jj * 8 * HD + d * 8, HD, ulong2(0), true);
                simdgroup_multiply_accumulate(acc, qm[d], kt, acc);
            }
            simdgroup_store(acc, s + jj * 8, BK);
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);

        // Online softmax of the row, 4 lanes per row.
        float mx = -INFINITY;
        for (uint c = part; c < BK; c += 4) {
            const float x = j0 + c < key_end ? s[row * BK + c] * p.scale : -INFINITY;
            s[row * BK + c] = x;
            mx = max(mx, x);
        }
        mx = max(mx, simd_shuffle_xor(mx, 1));
        mx = max(mx, simd_shuffle_xor(mx, 2));
        const float m_new = max(m, mx);  // finite: every tile holds at least one key
        float corr = precise::exp(m - m_new);  // 0 on the first tile (m = -inf)
        if (MUTANT(NO_MAX_SUBTRACTION)) {
            corr = 1.0f;
        }
        float sum = 0.0f;
        for (uint c = part; c < BK; c += 4) {
            const float x = s[row * BK + c];
            float pj = j0 + c < key_end ? precise::exp(x - m_new) : 0.0f;
            if (MUTANT(NO_MAX_SUBTRACTION)) {
                pj = j0 + c < key_end ? precise::exp(x) : 0.0f;
            }
            s[row * BK + c] = pj;
            sum += pj;
        }
        sum += simd_shuffle_xor(sum, 1);
        sum += simd_shuffle_xor(sum, 2);
        l = l * corr + sum;
        m = m_new;
        if (part == 0) {
            diag[row * 9] = MUTANT(FLASH_NO_RESCALE) ? 1.0f : corr;
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);

        // O = diag(corr) O + P V. Lazily: when no row of the simdgroup found a larger maximum
        // in this tile, every corr is exactly 1 and the product would leave O's bits as they are,
        // so it is skipped (the same for every lane: simd_any is uniform).
        const bool rescale = MUTANT(FLASH_RESCALE_IF_ALL) ? simd_all(corr != 1.0f) : simd_any(corr != 1.0f);
        simdgroup_float8x8 dm;
        if (rescale) {
            simdgroup_load(dm, diag, 8);
        }
        simdgroup_float8x8 pm[BK / 8];
        for (uint jj = 0; jj < BK / 8; ++jj) {
            simdgroup_load(pm[jj], s + jj * 8, BK);
        }
        for (uint d = 0; d < HD / 8; ++d) {
            if (rescale) {
                simdgroup_multiply(om[d], dm, om[d]);
            }
            for (uint jj = 0; jj < BK / 8; ++jj) {
                simdgroup_float8x8 vm;
                simdgroup_load(vm, kv + BK * HD + jj * 8 * HD + d * 8, HD);
                simdgroup_multiply_accumulate(om[d], pm[jj], vm, om[d]);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);  // before the next tile overwrites kv, s, diag
    }

    // O / l, through threadgroup memory (the simdgroup's 8 rows of kv), rows past q_end not written.
    if (part == 0) {
        diag[row * 9] = 1.0f / l;
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 dm;
    simdgroup_load(dm, diag, 8);
    TG_PARAM float* os = kv + sg * 8 * HD;
    for (uint d = 0; d < HD / 8; ++d) {
        simdgroup_multiply(om[d], dm, om[d]);
        simdgroup_store(om[d], os + d * 8, HD);
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    const uint out_stride = p.heads * HD;
    for (uint e = lane; e < 8 * HD; e += 32) {
        const uint qi = q0 + sg * 8 + e / HD;
        if (qi < p.q_end) {
            o[qi * out_stride + col0 + e % HD] = os[e];
        }
    }
}

// One kernel per head dim (HD a compile-time constant: the loops over HD/8 tiles unroll, Q and
// O live in registers), written out so every kernel's signature is checked as written. BK = 32
// keys per tile up to head dim 96, 16 above: threadgroup memory 2*BK*HD + 32*BK + 256 floats,
// at most 32 KiB. shaders.FlashHeadDims lists these; other head dims use `attention`.

kernel void attention_hd16(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 16];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<16, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd32(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 32];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<32, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd64(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 64];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<64, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd72(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 72];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<72, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd80(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 80];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<80, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd96(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 32 * 96];
    threadgroup float ss[FLASH_QUERIES * 32];
    threadgroup float dg[4 * 64];
    flash_attention<96, 32>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}

kernel void attention_hd128(device float* o [[buffer(0)]], device const float* q [[buffer(1)]],
                           device const float* k [[buffer(2)]], device const float* v [[buffer(3)]],
                           constant AttentionParams& p [[buffer(4)]],
                           uint2 group [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float kv[2 * 16 * 128];
    threadgroup float ss[FLASH_QUERIES * 16];
    threadgroup float dg[4 * 64];
    flash_attention<128, 16>(o, q, k, v, p, group, tid, sg, lane, kv, ss, dg);
}
