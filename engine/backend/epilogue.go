package backend

// epilogue.go: what a matrix product may do to its rows before it stores them, fused where a
// backend can (the CPU's packed paths, per 6-row tile while it is in L1) and as separate ops
// everywhere else.
//
// Invariant: a backend's MatMulEpilogue gives the bits of its MatMul, then GELU on y, then Add
// of y into the residual, whether it fuses them or not: the fused epilogue applies the same element-wise GELU to
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

// ApplyEpilogue runs ep on y [rows*out] with be's own ops (GELU, then Add into the residual):
// what a backend that does not fuse the epilogue does after its MatMul.
func ApplyEpilogue(be Backend, y View, n int, ep Epilogue) {
	if ep.GELU {
		be.GELU(y, n, ep.Form)
	}
	if ep.Residual.Buf != nil {
		be.Add(ep.Residual, y, n)
	}
}
