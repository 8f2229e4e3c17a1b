#include "textflag.h"

// func Bounds() (lo, hi uintptr)
TEXT ·Bounds(SB), NOSPLIT, $0-16
	MOVQ (TLS), AX // g
	MOVQ 0(AX), BX // g.stack.lo
	MOVQ BX, lo+0(FP)
	MOVQ 8(AX), BX // g.stack.hi
	MOVQ BX, hi+8(FP)
	RET
