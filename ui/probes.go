package ui

// probes.go adapts the engine's probes to what the panels draw. The math lives in engine
// (analysis.go); these only pick, convert and name.

import (
	"image"

	"github.com/turbospark/inspector/engine/imageproc"
	"github.com/turbospark/inspector/engine/probe"
)

// attentionRow is one head's row, or the mean of heads when head < 0.
func attentionRow(s *Snapshot, block, head, query int) ([]float32, error) {
	if head < 0 {
		return s.Probes.AttentionRowMean(block, query)
	}
	return s.Probes.AttentionRow(block, head, query)
}

func topK(row []float32, k int) []int { return probe.TopK(row, k) }

// rgbImage wraps the preprocessor's resized RGB as an image.Image.
func rgbImage(src *imageproc.RGB) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, src.W, src.H))
	for i := 0; i < src.W*src.H; i++ {
		copy(img.Pix[4*i:4*i+3], src.Pix[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img
}
