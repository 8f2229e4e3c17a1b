package engine

// SummarizeForTest is a Comparison of the given passes, summarized as CompareSessions does.
func SummarizeForTest(a, b []PassTimes) *Comparison {
	c := &Comparison{A: SideTimes{Passes: a}, B: SideTimes{Passes: b}}
	c.summarize()
	return c
}
