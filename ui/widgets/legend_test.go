// legend_test.go: pins the Legend's direction and labels. Invariant kept: the bar's left end
// is cm.At(0) above the lo label, its right end cm.At(1) above the hi label; the mutation it
// catches: a reversed or shifted gradient (t = 1 - x/w, or x/w never reaching 1), or lo and
// hi labels swapped.
package widgets

import (
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

func TestLegendRendersColormapEnds(t *testing.T) {
	test.NewTempApp(t)
	l := NewLegend()
	size := fyne.NewSize(300, 64)
	win := ivTestWindow(t, l, size)
	r := test.WidgetRenderer(l).(*legendRenderer)
	for _, cm := range []Colormap{Viridis, Magma} {
		l.SetRange(cm, 0, 0.031, "attention")
		capImg := win.Canvas().Capture()
		bp, bs := r.bar.Position(), r.bar.Size()
		if bs.Width < size.Width-1 || bs.Height < legendBarHeight {
			t.Fatalf("bar %v at %v: not the full width", bs, bp)
		}
		y := int(bp.Y + bs.Height/2)
		x0, x1 := int(bp.X)+2, int(bp.X+bs.Width)-3
		w := float64(bs.Width - 1)
		if got := capImg.At(x0, y); !legendTestClose(got, cm.At(float64(x0)/w), 3) || !legendTestClose(got, cm.At(0), 12) {
			t.Errorf("%v: left end %v, want about %v", cm, got, cm.At(0))
		}
		if got := capImg.At(x1, y); !legendTestClose(got, cm.At(float64(x1)/w), 3) || !legendTestClose(got, cm.At(1), 12) {
			t.Errorf("%v: right end %v, want about %v", cm, got, cm.At(1))
		}
		mid := int(bp.X + bs.Width/2)
		if got := capImg.At(mid, y); !legendTestClose(got, cm.At(float64(mid)/w), 3) {
			t.Errorf("%v: middle %v, want about %v", cm, got, cm.At(0.5))
		}
	}
	lo, hi := r.labels[0], r.labels[2]
	if lo.Text != "0" || hi.Text != "0.031" || r.caption.Text != "attention" {
		t.Errorf("labels %q .. %q, caption %q", lo.Text, hi.Text, r.caption.Text)
	}
	bp := r.bar.Position()
	if !(lo.Position().Y > bp.Y && lo.Position().X <= bp.X+1 && hi.Position().X+hi.Size().Width >= size.Width-1) {
		t.Errorf("lo label at %v, hi label at %v+%v: not under the bar's ends", lo.Position(), hi.Position(), hi.Size())
	}
	if lo.Alignment != fyne.TextAlignLeading || hi.Alignment != fyne.TextAlignTrailing {
		t.Error("lo must align left, hi right")
	}
	if mn := l.MinSize(); mn.Height > size.Height || mn.Width < 100 {
		t.Errorf("MinSize %v", mn)
	}
}

func TestLegendFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    float32
		want string
	}{
		{0, "0"}, {0.031, "0.031"}, {1, "1"}, {12.5, "12.5"}, {-0.25, "-0.25"},
		{1234, "1234"}, {12345.6, "12346"}, {3.4e6, "3.4e+06"}, {1.2e-5, "1.2e-05"}, {5e-4, "5e-04"}, {0.00123, "0.00123"}, {2e-7, "2e-07"},
		{float32(math.NaN()), "NaN"}, {float32(math.Inf(1)), "+Inf"},
	} {
		if got := legendFormatValue(tc.v); got != tc.want {
			t.Errorf("legendFormatValue(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
