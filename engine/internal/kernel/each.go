package kernel

// EachKernel runs f once per kernel this CPU can take — "generic" always, "fma" (AVX2, 16
// lanes) where HasFMA, "avx512" (32 lanes) where HasAVX512, "amx" (BF16 weights on the tile
// unit, the rest as avx512) where HasAMX — with UseFMA, UseAVX512 and UseAMX set
// accordingly, then restores the start-up choice. It is for tests that must hold every path
// to the same checks; not for parallel use (the switches are package state).
func EachKernel(f func(name string)) {
	saved, saved512, savedAMX := UseFMA, UseAVX512, UseAMX
	defer func() { UseFMA, UseAVX512, UseAMX = saved, saved512, savedAMX }()
	UseFMA, UseAVX512, UseAMX = false, false, false
	f("generic")
	if HasFMA {
		UseFMA = true
		f("fma")
	}
	if HasAVX512 {
		UseFMA, UseAVX512 = true, true
		f("avx512")
	}
	if HasAMX {
		UseFMA, UseAVX512, UseAMX = true, true, true
		f("amx")
	}
}
