package widgets

// imageview_gpu_test.go: the view draws the photo and a one-texel-per-patch overlay as two
// images (the GPU blends them): what it paints is the exports' composition (ComposeHeatmap),
// a new map leaves the photo's image alone (nothing but Cols x Rows texels to upload), and
// OnFrame times a hover to the paint that shows its map.

import (
	"image"
	"image/color"
	"math"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

// ivTestValues are one value per sequence index, with a NaN (an uncoloured patch).
func ivTestValues(n int) []float32 {
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)*0.7)*0.5 + 0.5)
	}
	vals[5] = float32(math.NaN())
	return vals
}

// The painted view, at the page's own size, is ComposeHeatmap of the same photo, grid,
// values, colormap, scale and opacity, to one level per channel (the blend's rounding).
func TestImageViewPaintsTheComposition(t *testing.T) {
	const W, H = 256, 128
	photo := ivTestPhoto(W, H)
	v, w, g := ivTestView(t, photo, fyne.NewSize(W, H))
	vals := ivTestValues(g.Len())
	sc := LinearScale(0, 1)
	v.SetOverlayScale(vals, Magma, sc)
	want := ComposeHeatmap(photo, g, vals, Magma, sc, 0.6)
	got := w.Canvas().Capture()
	worst := 0
	for y := range H {
		for x := range W {
			a := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
			b := want.RGBAAt(x, y)
			for _, d := range []int{int(a.R) - int(b.R), int(a.G) - int(b.G), int(a.B) - int(b.B)} {
				worst = max(worst, abs(d))
			}
		}
	}
	if worst > 1 {
		t.Errorf("the painted view differs from the composition by up to %d levels", worst)
	}
	// the uncoloured patch shows the photo
	rc := PatchGrid{Rows: g.Rows, Cols: g.Cols}
	for r := range g.Rows {
		for c := range g.Cols {
			if g.At(r, c) == 5 {
				pr := ivPatchRect(rc, W, H, r, c)
				x, y := (pr.Min.X+pr.Max.X)/2, (pr.Min.Y+pr.Max.Y)/2
				if a, b := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA), photo.RGBAAt(x, y); a != b {
					t.Errorf("the NaN patch shows %v, the photo %v", a, b)
				}
			}
		}
	}
}

// A new map changes the overlay's Cols x Rows texels and leaves the photo's image as it was:
// following the pointer uploads a texel per patch, not the page.
func TestImageViewNewMapKeepsThePhoto(t *testing.T) {
	v, w, g := ivTestView(t, ivTestPhoto(256, 128), fyne.NewSize(256, 128))
	r := test.WidgetRenderer(v).(*ivRenderer)
	v.SetOverlayScale(ivTestValues(g.Len()), Viridis, LinearScale(0, 1))
	w.Canvas().Capture()
	photo, ov := r.img.Image, r.ov.Image
	vals := ivTestValues(g.Len())
	vals[0] = 0.99
	v.SetOverlayScale(vals, Viridis, LinearScale(0, 1))
	w.Canvas().Capture()
	if r.img.Image != photo {
		t.Error("a new map replaced the photo's image (the whole page is uploaded again)")
	}
	if r.ov.Image == ov {
		t.Error("a new map kept the old overlay")
	}
	if b := r.ov.Image.Bounds(); b.Dx() != g.Cols || b.Dy() != g.Rows {
		t.Errorf("the overlay is %v, want one texel per patch (%dx%d)", b, g.Cols, g.Rows)
	}
	rc := 0
	for c := range g.Cols {
		if g.At(0, c) == 0 {
			rc = c
		}
	}
	if got, want := r.ov.Image.(*image.NRGBA).NRGBAAt(rc, 0), Viridis.At(0.99); got.R != want.R || got.G != want.G || got.B != want.B || got.A != 255 {
		t.Errorf("texel of sequence index 0 is %v, want %v", got, want)
	}
	v.SetOpacity(0.25)
	if r.ov.Translucency != 0.75 {
		t.Errorf("opacity 0.25 drawn with translucency %v", r.ov.Translucency)
	}
}

// OnFrame gets one time per followed move whose map was painted: from the pointer's move
// onto a new patch to the paint of the frame with the map set after it; none for a map no
// event asked for (even after a move), none for a frame without a new map.
func TestImageViewTimesAHoverToItsFrame(t *testing.T) {
	v, w, g := ivTestView(t, ivTestPhoto(256, 128), fyne.NewSize(256, 128))
	var frames []time.Duration
	v.OnFrame = func(d time.Duration) { frames = append(frames, d) }
	v.SetOverlayScale(ivTestValues(g.Len()), Viridis, LinearScale(0, 1)) // no hover
	w.Canvas().Capture()
	if len(frames) != 0 {
		t.Fatalf("a map no hover asked for was timed: %v", frames)
	}
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: ivTestCentre(v.Size(), 256, 128, g, 1, 1)}})
	v.SetOverlayScale(ivTestValues(g.Len()), Turbo, LinearScale(0, 1)) // a move no map followed
	w.Canvas().Capture()
	if len(frames) != 0 {
		t.Fatalf("a move no map followed was timed: %v", frames)
	}
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: ivTestCentre(v.Size(), 256, 128, g, 2, 1)}})
	v.TimeNextOverlay(v.MovedAt()) // the map follows this move
	const work = 20 * time.Millisecond
	time.Sleep(work) // the map's computation
	v.SetOverlayScale(ivTestValues(g.Len()), Magma, LinearScale(0, 1))
	w.Canvas().Capture()
	w.Canvas().Capture()
	if len(frames) != 1 || frames[0] < work {
		t.Fatalf("one hover, its map painted: frames %v, want one of at least %v", frames, work)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
