// Benchmarks. Invariant: BenchmarkPreprocess4K measures the whole
// Preprocess (resize + normalize + patchify) of a 4000x3000 photo-sized
// input at the default max_pixels (output 4000x3008, 11750 merged tokens).
package imageproc

import "testing"

func BenchmarkPreprocess4K(b *testing.B) {
	img := testPattern(4000, 3000)
	cfg := QwenConfig()
	b.ResetTimer()
	var page *Page
	for b.Loop() {
		var err error
		if page, err = Preprocess(img, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(page.Resized.W*page.Resized.H)/1e6*float64(b.N)/b.Elapsed().Seconds(), "Mpix_out/s")
}

func BenchmarkResize4K(b *testing.B) {
	img := testPattern(3000, 2000)
	for b.Loop() {
		resizeBicubic(img, 4096, 4096)
	}
}

func BenchmarkResizeDown(b *testing.B) {
	img := testPattern(8000, 6000)
	for b.Loop() {
		resizeBicubic(img, 4000, 3008)
	}
}
