package control

import (
	"sync"
	"testing"
	"time"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/cpu"
)

var cpuOnly = CPUOnly(func(threads int) backend.Backend { return cpu.New(threads) })

// Close from two goroutines at once (the window's close and a signal, say) closes once and
// returns from both: it used to check, then act, and the second close of the job channel
// panicked.
func TestConcurrentCloses(t *testing.T) {
	for range 20 {
		c := NewController(func(f func()) { f() }, cpuOnly)
		c.enqueue(func() { time.Sleep(20 * time.Millisecond) }) // a job in flight: both Closes wait for it
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Close()
			}()
		}
		wg.Wait()
	}
}
