package kernel

// EachKernel runs f once per kernel this CPU can take — "generic" always, "fma" (AVX2, 16
// lanes) where HasFMA, "avx512" (32 lanes) where HasAVX512 — with UseFMA and UseAVX512 set
// accordingly, then restores the start-up choice. It is for tests that must hold every path to
// the same checks; not for parallel use (the switches are package state).
func EachKernel(f func(name string)) {
	saved, saved512 := UseFMA, UseAVX512
	defer func() { UseFMA, UseAVX512 = saved, saved512 }()
	UseFMA, UseAVX512 = false, false
	f("generic")
	if HasFMA {
		UseFMA = true
		f("fma")
	}
	if HasAVX512 {
		UseFMA, UseAVX512 = true, true
		f("avx512")
	}
}
