// patchify's layout. Invariant checked: rows in merge-window order (block_row, block_col,
// in_row, in_col; geom.MergeOrderPos, whose own test holds it to the nested loops) and columns
// (c, t, y, x); a raster-order position fails at row 2.
package imageproc

import "testing"

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
	var order [][2]int // (row, col) of each sequence index, by the definition's nested loops
	for br := range 2 {
		for bc := range 4 {
			for ir := range 2 {
				for ic := range 2 {
					order = append(order, [2]int{br*2 + ir, bc*2 + ic})
				}
			}
		}
	}
	lut := normLUT(cfg)
	for i := range page.Rows {
		r, c := order[i][0], order[i][1]
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
