// Package gstack reads the running goroutine's stack bounds, for the replay driver (a package
// of its own: a package that uses cgo cannot have Go assembly).
package gstack

// Bounds returns the running goroutine's stack, [lo, hi): the runtime's g.stack, the first
// field of g ("offset known to runtime/cgo"). The driver checks them against its own frames.
func Bounds() (lo, hi uintptr)
