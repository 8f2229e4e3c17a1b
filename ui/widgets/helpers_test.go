// helpers_test.go: what the widget tests share: a headless app in a pinned theme variant, a
// window showing one widget alone, pixel probes and colour comparisons, bars found in a
// capture, both theme variants in turn, and the merge-order patch grid and images.
// Invariant: a widget is shown unpadded and alone, so it fills the canvas and a point of the
// capture is the widget-local point that the geometry and hit tests speak of. The mutation
// that would silently break it: a padded window, which shifts every probe by the theme
// padding so each test reads the pixel next to the one it names.
package widgets

import (
	"image"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// stripTestTheme pins the default theme to one variant (the test app reports neither).
type stripTestTheme struct {
	fyne.Theme
	v fyne.ThemeVariant
}

func (t stripTestTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.v)
}

// stripTestApp starts a headless app with the real default theme in variant v.
func stripTestApp(t *testing.T, v fyne.ThemeVariant) fyne.Theme {
	t.Helper()
	a := test.NewTempApp(t)
	th := stripTestTheme{theme.DefaultTheme(), v}
	a.Settings().SetTheme(th)
	return th
}

// stripTestThemes runs check once in each theme variant, each in a fresh app (stripTestApp).
func stripTestThemes(t *testing.T, check func(th fyne.Theme, v fyne.ThemeVariant)) {
	t.Helper()
	for _, v := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		check(stripTestApp(t, v), v)
	}
}

// stripVariantName names a theme variant in messages.
func stripVariantName(v fyne.ThemeVariant) string {
	if v == theme.VariantLight {
		return "light"
	}
	return "dark"
}

// stripTestWindow shows o alone, unpadded, at size w x h (so canvas = widget coordinates).
func stripTestWindow(t testing.TB, o fyne.CanvasObject, w, h float32) fyne.Window {
	t.Helper()
	win := test.NewWindow(o)
	win.SetPadded(false)
	win.Resize(fyne.NewSize(w, h))
	t.Cleanup(win.Close)
	return win
}

// ivTestWindow shows w alone, unpadded, at size; the widget then fills the canvas.
func ivTestWindow(t testing.TB, w fyne.CanvasObject, size fyne.Size) fyne.Window {
	t.Helper()
	win := stripTestWindow(t, w, size.Width, size.Height)
	if got := w.Size(); got != size {
		t.Fatalf("widget size %v, want %v", got, size)
	}
	return win
}

func stripPixel(img image.Image, x, y float32) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(int(x), int(y))).(color.NRGBA)
}

// stripClose reports whether two colours differ by at most tol in each channel.
func stripClose(a, b color.Color, tol int) bool {
	x, y := stripNRGBA(a), stripNRGBA(b)
	d := func(p, q uint8) bool { return int(p)-int(q) <= tol && int(q)-int(p) <= tol }
	return d(x.R, y.R) && d(x.G, y.G) && d(x.B, y.B) && d(x.A, y.A)
}

// legendTestClose reports whether a is within tol of b in R, G and B (alpha ignored).
func legendTestClose(a color.Color, b color.NRGBA, tol int) bool {
	c := color.NRGBAModel.Convert(a).(color.NRGBA)
	d := func(x, y uint8) int { return int(math.Abs(float64(x) - float64(y))) }
	return d(c.R, b.R) <= tol && d(c.G, b.G) <= tol && d(c.B, b.B) <= tol
}

// colormapTestLightness is CIE L* of an sRGB colour (D65).
func colormapTestLightness(c color.NRGBA) float64 {
	y := stripLuminance(c)
	if y > 216.0/24389 {
		return 116*math.Cbrt(y) - 16
	}
	return y * 24389 / 27
}

// barsRun is one bar as found in a capture: a run of columns holding bar colours.
type barsRun struct {
	x0, x1 int // columns [x0, x1)
	top    int // highest bar pixel
	height int // most bar pixels in one column
}

// barsFindRuns scans img below row ymin for columns holding pixels that match, and groups
// them into runs.
func barsFindRuns(img image.Image, ymin int, match func(color.NRGBA) bool) []barsRun {
	var runs []barsRun
	b := img.Bounds()
	in := false
	for x := b.Min.X; x < b.Max.X; x++ {
		count, top := 0, -1
		for y := max(b.Min.Y, ymin); y < b.Max.Y; y++ {
			if match(stripNRGBA(img.At(x, y))) {
				count++
				if top < 0 {
					top = y
				}
			}
		}
		switch {
		case count > 0 && !in:
			runs = append(runs, barsRun{x0: x, x1: x + 1, top: top, height: count})
			in = true
		case count > 0:
			r := &runs[len(runs)-1]
			r.x1 = x + 1
			r.top = min(r.top, top)
			r.height = max(r.height, count)
		default:
			in = false
		}
	}
	return runs
}

func barsMatchAny(cs ...color.Color) func(color.NRGBA) bool {
	return func(p color.NRGBA) bool {
		for _, c := range cs {
			if stripClose(p, c, 2) {
				return true
			}
		}
		return false
	}
}

// ivTestMergeIndex is the engine's 2x2 merge-window order, written out independently of
// engine/geom: windows row-major, then TL, TR, BL, BR inside a window.
func ivTestMergeIndex(cols int) func(r, c int) int {
	return func(r, c int) int {
		window := (r/2)*(cols/2) + c/2
		return window*4 + (r%2)*2 + c%2
	}
}

func ivTestGrid() PatchGrid { return PatchGrid{Rows: 4, Cols: 8, Index: ivTestMergeIndex(8)} }

func ivTestGray(W, H int, v uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	for i := range img.Pix {
		img.Pix[i] = v
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	return img
}

// ivTestView starts a headless app and shows a new ImageView of img on ivTestGrid, alone at
// size (ivTestWindow).
func ivTestView(t *testing.T, img image.Image, size fyne.Size) (*ImageView, fyne.Window, PatchGrid) {
	t.Helper()
	test.NewTempApp(t)
	g := ivTestGrid()
	v := NewImageView()
	v.SetImage(img, g)
	return v, ivTestWindow(t, v, size), g
}
