// rope.metal: 2D rotary embedding, in place, on q or k (never v), halves convention:
//   x'[i]      = x[i]      * cos[i]      - x[i+hd/2] * sin[i]
//   x'[i+hd/2] = x[i+hd/2] * cos[i+hd/2] + x[i]      * sin[i+hd/2]      for i < hd/2
//
// Invariant: element i pairs with i + head_dim/2 of the same head (rotate_half). Mutation
// that would silently break it: pairing 2i with 2i+1 (ROPE_INTERLEAVED, the other common
// convention) — every shape and norm is kept, only the positions are scrambled.

struct RopeParams {
    uint seq;
    uint heads;
    uint head_dim;
    uint stride;  // row stride of x in floats
};

// One thread per (row, head, pair): it reads both elements of its pair, then writes both.
kernel void rope2d(device float* x [[buffer(0)]],
                   device const float* cos_table [[buffer(1)]],
                   device const float* sin_table [[buffer(2)]],
                   constant RopeParams& p [[buffer(3)]],
                   uint gid [[thread_position_in_grid]]) {
    const uint half_dim = p.head_dim / 2;
    if (gid >= p.seq * p.heads * half_dim) {
        return;
    }
    const uint i = gid % half_dim;
    const uint head = (gid / half_dim) % p.heads;
    const uint s = gid / (half_dim * p.heads);
    uint a = i;
    uint b = i + half_dim;  // halves: i pairs with i + head_dim/2
    if (MUTANT(ROPE_INTERLEAVED)) {
        a = 2 * i;
        b = 2 * i + 1;
    }
    device float* xh = x + s * p.stride + head * p.head_dim;
    device const float* c = cos_table + s * p.head_dim;
    device const float* sn = sin_table + s * p.head_dim;
    const float xa = xh[a];
    const float xb = xh[b];
    xh[a] = xa * c[a] - xb * sn[a];
    xh[b] = xb * c[b] + xa * sn[b];
}
