// patchgrid.go: how patches tile a page, for the image widgets (ImageView, HeadGrid, the
// exports' ComposeHeatmap). Invariant: Index is a permutation of 0..Len()-1, or the grid is
// refused (Check, and SetImage treats it as no grid). The mutation that would silently break
// it: accepting an Index that repeats a sequence index — two patches would share one value
// and another value would never be drawn.
package widgets

import "fmt"

// PatchGrid says how patches tile the image: Rows x Cols patches; Index(row, col) is the
// patch's sequence index (the engine orders patches in merge windows, not raster order: the
// window passes engine/geom's Layout.Index). A nil Index means raster order (row*Cols + col).
type PatchGrid struct {
	Rows, Cols int
	Index      func(row, col int) int
}

// Len is the number of patches.
func (g PatchGrid) Len() int {
	if g.Rows <= 0 || g.Cols <= 0 {
		return 0
	}
	return g.Rows * g.Cols
}

// At returns grid.Index(row, col), or the raster index when Index is nil.
func (g PatchGrid) At(row, col int) int {
	if g.Index == nil {
		return row*g.Cols + col
	}
	return g.Index(row, col)
}

// Check reports an Index that is not a permutation of 0..Len()-1.
func (g PatchGrid) Check() error {
	_, err := ivRasterOf(g)
	return err
}

// ivRasterOf inverts the grid: rasterOf[seq] = row*Cols + col.
func ivRasterOf(g PatchGrid) ([]int, error) {
	n := g.Len()
	inv := make([]int, n)
	for i := range inv {
		inv[i] = -1
	}
	for r := 0; r < g.Rows; r++ {
		for c := 0; c < g.Cols; c++ {
			s := g.At(r, c)
			if s < 0 || s >= n {
				return nil, fmt.Errorf("patch grid %dx%d: Index(%d, %d) = %d is out of range", g.Rows, g.Cols, r, c, s)
			}
			if inv[s] >= 0 {
				return nil, fmt.Errorf("patch grid %dx%d: Index(%d, %d) = %d repeats", g.Rows, g.Cols, r, c, s)
			}
			inv[s] = r*g.Cols + c
		}
	}
	return inv, nil
}
