// patchPosition and patchify layout. Invariant checked: merge-window order
// (block_row, block_col, in_row, in_col) and columns (c, t, y, x); a
// raster-order patchPosition fails at index 2.
package imageproc

import "testing"

func TestPatchPositionMatchesNestedLoops(t *testing.T) {
	for _, g := range [][3]int{{2, 2, 2}, {4, 6, 2}, {14, 20, 2}, {6, 9, 3}, {3, 5, 1}} {
		gh, gw, m := g[0], g[1], g[2]
		i := 0
		for br := range gh / m {
			for bc := range gw / m {
				for ir := range m {
					for ic := range m {
						r, c := patchPosition(i, gh, gw, m)
						if r != br*m+ir || c != bc*m+ic {
							t.Fatalf("grid %v i=%d: (%d,%d), want (%d,%d)", g, i, r, c, br*m+ir, bc*m+ic)
						}
						// the same position in the next temporal slice
						if r2, c2 := patchPosition(i+gh*gw, gh, gw, m); r2 != r || c2 != c {
							t.Fatalf("grid %v i=%d: next slice gives (%d,%d)", g, i, r2, c2)
						}
						i++
					}
				}
			}
		}
	}
}

// TestPatchifyLayout builds an image whose pixel values encode their own
// position and checks every element of the output against the definition.
func TestPatchifyLayout(t *testing.T) {
	cfg := QwenConfig()
	cfg.MinPixels = 0
	img := &RGB{W: 128, H: 64, Pix: make([]uint8, 128*64*3)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i*7 + i/384)
	}
	page, err := Preprocess(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if page.Grid != [3]int{1, 4, 8} || page.Rows != 32 || page.Cols != 1536 {
		t.Fatalf("grid %v rows %d cols %d", page.Grid, page.Rows, page.Cols)
	}
	lut := normLUT(cfg)
	for i := range page.Rows {
		r, c := patchPosition(i, 4, 8, 2)
		for col := range page.Cols {
			ch, y, x := col/512, col/16%16, col%16 // t (col/256%2) repeats the frame
			v := img.Pix[((r*16+y)*128+c*16+x)*3+ch]
			if got := page.Pixels[i*1536+col]; got != lut[ch][v] {
				t.Fatalf("row %d col %d: %v, want %v", i, col, got, lut[ch][v])
			}
		}
	}
}

func TestNormLUTValues(t *testing.T) {
	lut := normLUT(QwenConfig())
	if lut[0][0] != -1 || lut[1][255] != 1 || lut[2][128] != float32(float32(float32(128.0/255)-0.5)/0.5) {
		t.Fatalf("lut endpoints %v %v %v", lut[0][0], lut[1][255], lut[2][128])
	}
}
