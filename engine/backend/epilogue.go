package backend

// epilogue.go: what a matrix product may do to its rows before it stores them, fused where a
// backend can (the CPU's packed paths, per 6-row tile while it is in L1) and as separate ops
// everywhere else.
//
// Invariant: MatMulThen gives the bits of MatMul, then GELU on y, then Add of y into the
// residual, whichever way it runs: the fused epilogue applies the same element-wise GELU to
// the same values and adds the same y, in the same float32 rounding.
// Mutation that would silently break it: a fused epilogue that adds the residual before the
// bias (acc + h + b instead of (acc + b) + h): the sum rounds differently in the last bit, a
// difference no tolerance test sees (engine/cpu's TestEpilogueSameBits compares bits).

// Epilogue is applied to y = x W^T + bias, in this order: the GELU (when GELU is set), then
// Residual[r, o] += y[r, o] (when Residual has a buffer). y is written either way, so a tap on
// it still sees the product.
type Epilogue struct {
	GELU     bool
	Form     GELUForm
	Residual View // [rows, out], must not overlap y or x
}

// EpilogueMatMul is implemented by backends that fuse the epilogue into the product.
type EpilogueMatMul interface {
	MatMulEpilogue(y, x View, w Weight, bias Weight, rows, in, out int, ep Epilogue)
}

// MatMulThen runs y = x W^T + bias and ep on be: fused where be implements EpilogueMatMul,
// else as MatMul, GELU and Add.
func MatMulThen(be Backend, y, x View, w, bias Weight, rows, in, out int, ep Epilogue) {
	if f, ok := be.(EpilogueMatMul); ok {
		f.MatMulEpilogue(y, x, w, bias, rows, in, out, ep)
		return
	}
	be.MatMul(y, x, w, bias, rows, in, out)
	if ep.GELU {
		be.GELU(y, rows*out, ep.Form)
	}
	if ep.Residual.Buf != nil {
		be.Add(ep.Residual, y, rows*out)
	}
}
