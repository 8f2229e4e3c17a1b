// attention.metal: softmax(q_s . K^T * scale) V over the keys of s's segment, one head, and
// the same softmax row alone for one query patch (the inspector's attention map).
//
// Invariant: a query sees only the keys of its own segment [seg_start, seg_end), and every
// exp is taken after subtracting the running maximum, so any logit size stays finite.
// Mutations that would silently break it: reading keys outside the segment
// (NO_SEGMENT_BOUND: images of one page would attend to each other), and exp without the
// maximum (NO_MAX_SUBTRACTION: right for small logits, inf/NaN once a logit passes ~88).

// The scalar kernel here and the flash kernels (flash.metal, compiled in a library that
// includes this file) take these. A dispatch runs the queries [q_begin, q_end) of one
// segment against the keys [seg_start, seg_end); the host splits a long segment's queries
// over several dispatches (and command buffers) so none runs long enough for the watchdog.
struct AttentionParams {
    uint seg_start;
    uint seg_end;
    uint q_begin;
    uint q_end;
    uint seq;       // rows of q, k, v (all segments)
    uint heads;
    uint head_dim;  // at most 32 * ATT_DIM_CHUNKS (the attention_hdN kernels: N)
    uint stride;    // row stride of q, k and v in floats
    float scale;
};

constant constexpr uint ATT_QUERIES = 4;     // simdgroups per threadgroup, one query each
constant constexpr uint ATT_DIM_CHUNKS = 4;  // lane d owns output dims d, d+32, d+64, d+96

// Threadgroup (x, y) = queries q_begin + 4x .. +3 of head y.
// Per chunk of 32 keys: lane j scores key j0+j, the chunk's maximum updates the running one
// (online softmax), then each lane accumulates its own output dims over the chunk.
kernel void attention(device float* o [[buffer(0)]],
                      device const float* q [[buffer(1)]],
                      device const float* k [[buffer(2)]],
                      device const float* v [[buffer(3)]],
                      constant AttentionParams& p [[buffer(4)]],
                      uint2 group [[threadgroup_position_in_grid]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float probs[ATT_QUERIES * 32];
    const uint query = p.q_begin + group.x * ATT_QUERIES + sg;
    const uint head = group.y;
    if (query >= p.q_end) {
        return;  // the whole simdgroup; no threadgroup barrier follows
    }
    const uint key_begin = MUTANT(NO_SEGMENT_BOUND) ? 0 : p.seg_start;
    const uint key_end = MUTANT(NO_SEGMENT_BOUND) ? p.seq : p.seg_end;
    device const float* qh = q + query * p.stride + head * p.head_dim;
    float m = -INFINITY;  // running maximum of the scores
    float l = 0.0f;       // running sum of exp(score - m)
    float acc[ATT_DIM_CHUNKS];
    for (uint c = 0; c < ATT_DIM_CHUNKS; ++c) {
        acc[c] = 0.0f;
    }
    for (uint j0 = key_begin; j0 < key_end; j0 += 32) {
        const uint j = j0 + lane;
        const bool live = j < key_end;
        float score = -INFINITY;
        if (live) {
            device const float* kh = k + j * p.stride + head * p.head_dim;
            float dot = 0.0f;
            for (uint d = 0; d < p.head_dim; ++d) {
                dot = fma(qh[d], kh[d], dot);
            }
            score = dot * p.scale;
        }
        const float m_new = max(m, simd_max(score));
        float corr = precise::exp(m - m_new);  // 0 on the first chunk (m = -inf)
        float pj = live ? precise::exp(score - m_new) : 0.0f;
        if (MUTANT(NO_MAX_SUBTRACTION)) {
            corr = 1.0f;
            pj = live ? precise::exp(score) : 0.0f;
        }
        l = l * corr + simd_sum(pj);
        probs[sg * 32 + lane] = pj;
        simdgroup_barrier(mem_flags::mem_threadgroup);
        const uint n = min(32u, key_end - j0);
        for (uint c = 0; c < ATT_DIM_CHUNKS; ++c) {
            const uint d = lane + 32 * c;
            if (d < p.head_dim) {
                float a = acc[c] * corr;
                for (uint t = 0; t < n; ++t) {
                    a = fma(probs[sg * 32 + t], v[(j0 + t) * p.stride + head * p.head_dim + d], a);
                }
                acc[c] = a;
            }
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);  // before the next chunk rewrites probs
        m = m_new;
    }
    device float* oh = o + query * (p.heads * p.head_dim) + head * p.head_dim;
    for (uint c = 0; c < ATT_DIM_CHUNKS; ++c) {
        const uint d = lane + 32 * c;
        if (d < p.head_dim) {
            oh[d] = acc[c] / l;
        }
    }
}
