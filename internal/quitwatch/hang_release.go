//go:build !inspectortest

package quitwatch

// HangAfterWindow is false outside the tests' build (hang_inspectortest.go).
func HangAfterWindow() bool { return false }
