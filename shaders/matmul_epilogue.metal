// matmul_epilogue.metal: what both matmul families share — the parameter struct and the
// epilogue that finishes one output from its accumulated product. The simdgroup-matrix
// kernels (matmul.metal) and their scalar fallback (matmul_scalar.metal) compile in libraries
// of their own, each with this file, so the two give the same epilogue by construction.
//
// Invariant: the epilogue applies, in the graph's order, the bias, the GELU of the dispatch's
// form (elementwise.metal's element functions, so fused and unfused runs give the same bits
// for the same product), stores y, then adds y into the residual. Mutation that would
// silently break it: storing y before its GELU (EPILOGUE_Y_BEFORE_GELU) — the residual
// stream stays right, a tap on fc1 sees the wrong activations.

struct MatMulParams {
    uint rows;
    uint in_dim;   // x columns, W columns
    uint out_dim;  // y columns, W rows
    uint has_bias;
    uint bias_dtype;
    uint gelu;          // MM_GELU_*
    uint has_residual;  // residual[r,o] += y[r,o] after y is stored
};

constant constexpr uint MM_GELU_NONE = 0;
constant constexpr uint MM_GELU_TANH = 1;
constant constexpr uint MM_GELU_ERF = 2;
constant constexpr uint MM_GELU_QUICK = 3;
constant constexpr uint MM_GELU_SILU = 4;

// mm_epilogue finishes output (r, o), whose product sum_i x[r,i] W[o,i] is v.
inline void mm_epilogue(device float* y, device float* residual, device const uchar* bias, constant MatMulParams& p,
                        uint r, uint o, float v) {
    if (p.has_bias != 0) {
        v = v + load_weight(bias, p.bias_dtype, o);
    }
    const float pre = v;
    if (p.gelu == MM_GELU_TANH) {
        v = gelu_tanh_of(v);
    } else if (p.gelu == MM_GELU_ERF) {
        v = gelu_erf_of(v);
    } else if (p.gelu == MM_GELU_QUICK) {
        v = MUTANT(QUICK_AS_TANH) ? gelu_tanh_of(v) : gelu_quick_of(v);
    } else if (p.gelu == MM_GELU_SILU) {
        v = MUTANT(SILU_AS_QUICK) ? gelu_quick_of(v) : silu_of(v);
    }
    y[r * p.out_dim + o] = MUTANT(EPILOGUE_Y_BEFORE_GELU) ? pre : v;
    if (p.has_residual != 0) {
        residual[r * p.out_dim + o] = residual[r * p.out_dim + o] + v;
    }
}
