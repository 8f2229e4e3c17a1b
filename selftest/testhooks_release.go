//go:build !inspectortest

package selftest

// testhooks_release.go: the release build's side of testhooks.go — no stand-in GPU, no
// injected faults, the real limits. The variables that drive the hooks in the tests' build
// mean nothing here.

import (
	"time"

	"github.com/turbospark/inspector/engine/backend"
)

const TestHooksBuilt = false

func StandinGPU() bool                         { return false }
func standinMetal(threads int) backend.Backend { panic("no stand-in GPU in the release build") }
func testFallbacks() []string                  { return nil }
func childLimit(limit time.Duration) time.Duration {
	return limit
}
func injectFault(where string)         {}
func injectChildStart(firstChild bool) {}
func dataFault(where string) string    { return "" }
func muted(where string) bool          { return false }
func setDataFault(where string)        {}
