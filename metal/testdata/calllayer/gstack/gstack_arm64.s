#include "textflag.h"

// func Bounds() (lo, hi uintptr)
TEXT ·Bounds(SB), NOSPLIT, $0-16
	MOVD 0(g), R0 // g.stack.lo
	MOVD R0, lo+0(FP)
	MOVD 8(g), R0 // g.stack.hi
	MOVD R0, hi+8(FP)
	RET
