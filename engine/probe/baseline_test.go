package probe_test

import (
	"context"
	"math"
	"testing"

	"github.com/turbospark/inspector/engine/geom"
	"github.com/turbospark/inspector/engine/probe"
)

// Attention that looks nowhere in particular (q and k zero: every key of the segment weighted
// alike) has exactly the uniform baseline's distance and entropy, on a page of an image and a
// 2-frame video (segments of several lengths) and on a sample of the queries.
func TestUniformBaselineIsUniformAttention(t *testing.T) {
	lay, err := geom.NewLayout(2, []geom.Grid{{T: 1, H: 6, W: 8}, {T: 2, H: 4, W: 4}})
	if err != nil {
		t.Fatal(err)
	}
	s := probe.NewStore(lay, 2, 8)
	s.AddQK(make([]float32, lay.Rows()*2*s.Hidden))
	for _, maxQ := range []int{0, 7} {
		d, e, err := s.HeadStats(context.Background(), 0, maxQ)
		if err != nil {
			t.Fatal(err)
		}
		bd, be := s.UniformBaseline(0, maxQ)
		for h := range d {
			if math.Abs(d[h]-bd) > 1e-9*bd || math.Abs(e[h]-be) > 1e-9*be {
				t.Errorf("%d queries, head %d: uniform attention %v patches / %v nats, the baseline %v / %v", maxQ, h, d[h], e[h], bd, be)
			}
		}
	}
}
