package geom

import "testing"

// MergeOrderPos walks the frame as the processor's definition does: merge windows row-major,
// then the patches of each window row-major (a raster order fails at index 2).
func TestMergeOrderPosMatchesNestedLoops(t *testing.T) {
	for _, g := range [][3]int{{2, 2, 2}, {4, 6, 2}, {14, 20, 2}, {6, 9, 3}, {3, 5, 1}} {
		gh, gw, m := g[0], g[1], g[2]
		i := 0
		for br := range gh / m {
			for bc := range gw / m {
				for ir := range m {
					for ic := range m {
						if p := MergeOrderPos(i, gw, m); p != (PatchPos{br*m + ir, bc*m + ic}) {
							t.Fatalf("grid %v i=%d: %v, want (%d,%d)", g, i, p, br*m+ir, bc*m+ic)
						}
						i++
					}
				}
			}
		}
	}
}
