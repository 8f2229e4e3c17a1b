// layernorm.metal: y[r,:] = (x[r,:] - mean) / sqrt(var + eps) * w + b over cols (layer_norm),
// and y[r,:] = x[r,:] / sqrt(mean(x^2) + eps) * w (rms_norm, Qwen2.5-VL's norms).
//
// Invariant: the variance is the biased one (divide by cols), computed in a second pass
// around the mean (not E[x^2] - mean^2, which cancels); rms_norm takes no mean off. Mutation
// that would silently break it: dividing by cols-1 (UNBIASED_VARIANCE) — outputs move by
// ~1/(2 cols), still "normal"; or centering the RMS norm's rows (RMS_CENTERED).

struct LayerNormParams {
    uint rows;
    uint cols;
    float eps;
    uint w_dtype;
    uint b_dtype;
};

// One simdgroup (32 threads) per row; lanes stride over the columns.
kernel void layer_norm(device float* y [[buffer(0)]],
                       device const float* x [[buffer(1)]],
                       device const uchar* w [[buffer(2)]],
                       device const uchar* b [[buffer(3)]],
                       constant LayerNormParams& p [[buffer(4)]],
                       uint row [[threadgroup_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]]) {
    if (row >= p.rows) {
        return;  // the whole threadgroup: it is one simdgroup
    }
    device const float* xr = x + row * p.cols;
    float sum = 0.0f;
    for (uint i = lane; i < p.cols; i += 32) {
        sum += xr[i];
    }
    const float mean = simd_sum(sum) / float(p.cols);
    float squares = 0.0f;
    for (uint i = lane; i < p.cols; i += 32) {
        const float d = xr[i] - mean;
        squares += d * d;
    }
    const float n = MUTANT(UNBIASED_VARIANCE) ? float(p.cols - 1) : float(p.cols);  // biased: n
    const float inv = precise::rsqrt(simd_sum(squares) / n + p.eps);
    device float* yr = y + row * p.cols;
    for (uint i = lane; i < p.cols; i += 32) {
        yr[i] = (xr[i] - mean) * inv * load_weight(w, p.w_dtype, i) + load_weight(b, p.b_dtype, i);
    }
}

// One simdgroup (32 threads) per row, as layer_norm; w only (RMS norms have no bias).
kernel void rms_norm(device float* y [[buffer(0)]],
                     device const float* x [[buffer(1)]],
                     device const uchar* w [[buffer(2)]],
                     constant LayerNormParams& p [[buffer(3)]],
                     uint row [[threadgroup_position_in_grid]],
                     uint lane [[thread_index_in_simdgroup]]) {
    if (row >= p.rows) {
        return;  // the whole threadgroup: it is one simdgroup
    }
    device const float* xr = x + row * p.cols;
    float mean = 0.0f;
    if (MUTANT(RMS_CENTERED)) {
        float sum = 0.0f;
        for (uint i = lane; i < p.cols; i += 32) {
            sum += xr[i];
        }
        mean = simd_sum(sum) / float(p.cols);
    }
    float squares = 0.0f;
    for (uint i = lane; i < p.cols; i += 32) {
        const float v = xr[i] - mean;
        squares += v * v;
    }
    const float inv = precise::rsqrt(simd_sum(squares) / float(p.cols) + p.eps);
    device float* yr = y + row * p.cols;
    for (uint i = lane; i < p.cols; i += 32) {
        yr[i] = ((xr[i] - mean) * inv) * load_weight(w, p.w_dtype, i);
    }
}
