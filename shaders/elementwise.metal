// elementwise.metal: GELU (three forms) and SiLU in place, the residual add, and the gated
// MLP's product.
//
// Invariant: gelu_tanh computes 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))) (Qwen3-VL's block MLP,
// "gelu_pytorch_tanh"); gelu_erf computes 0.5x(1+erf(x/sqrt(2))) (the mergers, nn.GELU());
// gelu_quick computes x*sigmoid(1.702x) (Qwen2-VL's block MLP, "quick_gelu").
// Mutation that would silently break it: swapping two of them (GELU_FORMS_SWAPPED: tanh and
// erf; QUICK_AS_TANH: quick and tanh) — the curves differ by a few 1e-3 to 1e-2, so the model
// stays fluent and wrong.

struct ElementwiseParams {
    uint n;
};

inline float gelu_tanh_of(float x) {
    const float k = 0.7978845608028654f;  // sqrt(2/pi)
    return 0.5f * x * (1.0f + precise::tanh(k * (x + 0.044715f * x * x * x)));
}

// erfc_nonneg(a) = 1 - erf(a) for a >= 0, Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
// MSL has no erf. Written as erfc so 1 + erf(z) for z < 0 does not cancel.
inline float erfc_nonneg(float a) {
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    const float poly =
        t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    return poly * precise::exp(-a * a);
}

inline float gelu_erf_of(float x) {
    const float z = x * 0.70710678118654752f;  // x / sqrt(2)
    const float c = erfc_nonneg(fabs(z));
    const float one_plus_erf = z >= 0.0f ? 2.0f - c : c;
    return 0.5f * x * one_plus_erf;
}

// silu_of: x / (1 + exp(-x)) (Qwen2.5-VL's gate); exp overflows to +inf for x < -88, giving -0.
inline float silu_of(float x) {
    return x / (1.0f + precise::exp(-x));
}

// gelu_quick_of: x / (1 + exp(-1.702x)); exp overflows to +inf for x < -52, giving -0.
inline float gelu_quick_of(float x) {
    return x / (1.0f + precise::exp(-1.702f * x));
}

kernel void gelu_tanh(device float* x [[buffer(0)]], constant ElementwiseParams& p [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        // TANH here: the block MLP. (ERF in the mergers, below.)
        x[i] = MUTANT(GELU_FORMS_SWAPPED) ? gelu_erf_of(x[i]) : gelu_tanh_of(x[i]);
    }
}

kernel void gelu_erf(device float* x [[buffer(0)]], constant ElementwiseParams& p [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        // ERF here: the mergers. (TANH in the block MLP, above.)
        x[i] = MUTANT(GELU_FORMS_SWAPPED) ? gelu_tanh_of(x[i]) : gelu_erf_of(x[i]);
    }
}

kernel void gelu_quick(device float* x [[buffer(0)]], constant ElementwiseParams& p [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        // QUICK here: Qwen2-VL's block MLP.
        x[i] = MUTANT(QUICK_AS_TANH) ? gelu_tanh_of(x[i]) : gelu_quick_of(x[i]);
    }
}

kernel void gelu_silu(device float* x [[buffer(0)]], constant ElementwiseParams& p [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        // SILU here: Qwen2.5-VL's gate.
        x[i] = MUTANT(SILU_AS_QUICK) ? gelu_quick_of(x[i]) : silu_of(x[i]);
    }
}

// mul_into: dst *= src, element by element (dst may be src itself): the gate times up.
kernel void mul_into(device float* dst [[buffer(0)]], device const float* src [[buffer(1)]],
                constant ElementwiseParams& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        dst[i] = MUTANT(MUL_ADDS) ? dst[i] + src[i] : dst[i] * src[i];
    }
}

// add_into: dst += src, element by element (dst may be src itself): the residual adds.
kernel void add_into(device float* dst [[buffer(0)]], device const float* src [[buffer(1)]],
                constant ElementwiseParams& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < p.n) {
        dst[i] = dst[i] + src[i];
    }
}

// fill_columns: columns [c0, c1) of rows rows of x (row stride `stride`) set to 0, or (mean != 0)
// to each column's mean over the rows, summed in row order: head ablation. One thread per
// column; a column's reads and writes are its thread's alone.
struct FillColumnsParams {
    uint rows;
    uint stride;
    uint c0;
    uint c1;
    uint mean;
};

kernel void fill_columns(device float* x [[buffer(0)]], constant FillColumnsParams& p [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    const uint c = p.c0 + i;
    if (c >= p.c1) {
        return;
    }
    float v = 0.0f;
    if (p.mean != 0) {
        float s = 0.0f;
        const uint rows = MUTANT(MEAN_SKIPS_LAST_ROW) ? p.rows - 1 : p.rows;
        for (uint r = 0; r < rows; r++) {
            s += x[r * p.stride + c];
        }
        v = s / float(p.rows);
    }
    for (uint r = 0; r < p.rows; r++) {
        x[r * p.stride + c] = v;
    }
}
