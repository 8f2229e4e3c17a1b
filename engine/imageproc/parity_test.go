// Parity with HF transformers fixtures. Invariant checked: Preprocess is
// Qwen2VLImageProcessorPil to <=1e-6 (in practice bit-exact) and within the
// documented 0.02 of the torchvision backend. A mutation that breaks it
// silently elsewhere (math.Round in smartResize, no +0.5 in the bicubic
// argument, raster row order) fails here.
package imageproc

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

type fixtureCase struct {
	file      string
	maxPixels int
	grid      [3]int
}

var fixtureCases = []fixtureCase{
	{"imgproc_100x150.safetensors", 0, [3]int{1, 14, 20}},
	{"imgproc_300x400_default.safetensors", 0, [3]int{1, 18, 24}},
	{"imgproc_300x400_maxpix16384.safetensors", 16384, [3]int{1, 6, 8}},
}

func fixtureImage(t *testing.T, ts map[string]*stTensor) *RGB {
	u8 := ts["img_u8"]
	if len(u8.Shape) != 3 || u8.Shape[2] != 3 {
		t.Fatalf("img_u8 shape %v", u8.Shape)
	}
	return &RGB{W: u8.Shape[1], H: u8.Shape[0], Pix: u8.raw}
}

func TestFixtureParity(t *testing.T) {
	for _, fc := range fixtureCases {
		t.Run(fc.file, func(t *testing.T) {
			ts := readSafetensors(t, filepath.Join("testdata", fc.file))
			cfg := QwenConfig()
			if fc.maxPixels > 0 {
				cfg.MaxPixels = fc.maxPixels
			}
			page, err := Preprocess(fixtureImage(t, ts), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if page.Grid != fc.grid {
				t.Fatalf("grid %v, want %v", page.Grid, fc.grid)
			}
			checkAgainst(t, page, ts, "Qwen2VLImageProcessorPil", 1e-6)
			checkAgainst(t, page, ts, "Qwen2VLImageProcessor", 0.02)
		})
	}
}

// checkAgainst compares page with fixture tensor name (and its _grid).
func checkAgainst(t *testing.T, page *Page, ts map[string]*stTensor, name string, tol float64) {
	t.Helper()
	ref, g := ts[name], ts[name+"_grid"].i64()
	if got := [3]int{int(g[0]), int(g[1]), int(g[2])}; got != page.Grid {
		t.Fatalf("%s grid %v, Preprocess %v", name, got, page.Grid)
	}
	if ref.Shape[0] != page.Rows || ref.Shape[1] != page.Cols {
		t.Fatalf("%s shape %v, Preprocess [%d %d]", name, ref.Shape, page.Rows, page.Cols)
	}
	maxd, nExact := maxAbsDiff(page.Pixels, ref.f32())
	t.Logf("%s: max |diff| %.3g, %d of %d values bit-identical", name, maxd, nExact, len(page.Pixels))
	if maxd > tol {
		t.Errorf("%s: max |diff| %g > %g", name, maxd, tol)
	}
}

func maxAbsDiff(a, b []float32) (float64, int) {
	var m float64
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
		m = math.Max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m, same
}

// TestFixturePilBitExact documents that the PIL backend is reproduced bit
// for bit (stronger than the 1e-6 the contract asks for).
func TestFixturePilBitExact(t *testing.T) {
	for _, fc := range fixtureCases {
		ts := readSafetensors(t, filepath.Join("testdata", fc.file))
		cfg := QwenConfig()
		if fc.maxPixels > 0 {
			cfg.MaxPixels = fc.maxPixels
		}
		page, err := Preprocess(fixtureImage(t, ts), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d, same := maxAbsDiff(page.Pixels, ts["Qwen2VLImageProcessorPil"].f32()); same != len(page.Pixels) {
			t.Errorf("%s: %d values differ (max %g)", fc.file, len(page.Pixels)-same, d)
		}
	}
}

// TestFixtureDerivedSizes ties the fixture grids to smartResize and the
// Resized image / original size fields.
func TestFixtureDerivedSizes(t *testing.T) {
	for _, fc := range fixtureCases {
		ts := readSafetensors(t, filepath.Join("testdata", fc.file))
		img := fixtureImage(t, ts)
		cfg := QwenConfig()
		if fc.maxPixels > 0 {
			cfg.MaxPixels = fc.maxPixels
		}
		page, _ := Preprocess(img, cfg)
		got := fmt.Sprintf("%dx%d->%dx%d", page.OrigH, page.OrigW, page.Resized.H, page.Resized.W)
		want := fmt.Sprintf("%dx%d->%dx%d", img.H, img.W, fc.grid[1]*16, fc.grid[2]*16)
		if got != want {
			t.Errorf("%s: %s, want %s", fc.file, got, want)
		}
	}
}
