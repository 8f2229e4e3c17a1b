package probe

// baseline.go: what HeadStats gives for attention that looks nowhere in particular — every
// key of the query's segment weighted alike — on the same queries, so a chart of mean
// distance or entropy can show where "local" and "diffuse" begin on this page: a head near
// the uniform baseline is not local, whatever its number.
//
// Invariant: the baseline uses HeadStats' own queries (EvenQueries) and segments, and its
// distance and entropy definitions (Euclidean patch distance within the frame; entropy in
// nats). Mutation that would silently break it: averaging over every patch of the page
// rather than each query's segment — on a video or a page of several images the baseline
// would count distances across frames that no head can attend to.

import "math"

// UniformBaseline is the mean attention distance and entropy of uniform attention over each
// query's segment in block (its window, in a windowed block), over the queries
// HeadStats(…, block, maxQueries) uses.
func (s *Store) UniformBaseline(block, maxQueries int) (dist, entropy float64) {
	qs := EvenQueries(s.Layout.Rows(), maxQueries)
	pos := s.Layout.Pos
	for _, q := range qs {
		seg := s.Layout.SegmentOf(block, q)
		pq := pos[q]
		var d float64
		for _, kp := range pos[seg.Start:seg.End] {
			dr, dc := float64(pq.Row-kp.Row), float64(pq.Col-kp.Col)
			d += math.Sqrt(dr*dr + dc*dc)
		}
		L := float64(seg.End - seg.Start)
		dist += d / L
		entropy += math.Log(L)
	}
	return dist / float64(len(qs)), entropy / float64(len(qs))
}
