package guard

import "testing"

func TestParseStatus(t *testing.T) {
	status := "Name:\tinspector\nVmPeak:\t 1658224 kB\nVmSize:\t 1592688 kB\nVmRSS:\t   24716 kB\nThreads:\t7\n"
	vm, threads := parseStatus([]byte(status))
	if vm != 1592688*1024 || threads != 7 {
		t.Errorf("VmSize %d, threads %d; want %d, 7", vm, threads, 1592688*1024)
	}
}
