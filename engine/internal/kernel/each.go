package kernel

// EachKernel runs f once per kernel this CPU can take — "generic" always, "fma" where
// HasFMA — with UseFMA set accordingly, then restores the start-up choice. It is for tests
// that must hold both paths to the same checks; not for parallel use (UseFMA is package state).
func EachKernel(f func(name string)) {
	saved := UseFMA
	defer func() { UseFMA = saved }()
	UseFMA = false
	f("generic")
	if HasFMA {
		UseFMA = true
		f("fma")
	}
}
