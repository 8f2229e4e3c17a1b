package ui

// frames.go: the follow-mouse frame-time probe. Each hover that moved the query to another
// patch is timed from the pointer event to the paint of the frame that shows its map
// (widgets.ImageView.OnFrame), and to that frame's end: the UI goroutine's next turn after
// the paint, which comes once the frame is swapped to the screen (the GL loop handles
// events, paints and swaps in one tick, then runs what was posted meanwhile). The log
// writes one line per frame and, at the end, the median, the 90th percentile and the worst
// of both.
//
// Invariant: a logged time runs from the event, never from the map's arrival: the row's
// computation, the overlay and the GL upload are all in it. Mutation that would silently
// break it: stamping the time when SetOverlayScale is called — the figures would leave out
// the probe's work and read as fast as the window wants to look.

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// FrameLog collects the follow-mouse frame times of one window.
type FrameLog struct {
	mu        sync.Mutex
	w         io.Writer
	painted   []time.Duration // event to the paint of its frame
	presented []time.Duration // event to the end of that frame (swapped)
}

// LogFrames times every hover to its painted and presented frame, writing a line to w for
// each.
func (in *Inspector) LogFrames(w io.Writer) *FrameLog {
	l := &FrameLog{w: w}
	in.panels.image.view.OnFrame = func(toPaint time.Duration) { // on the UI goroutine, in the paint
		paintedAt := time.Now()
		what := fmt.Sprintf("%s, %s", in.Sel.Overlay, headName(in.Sel.Head))
		if in.Snap.Loaded() {
			what += fmt.Sprintf(", %d patches", in.Snap.Layout.Rows())
		}
		go in.Ctl.Do(func() { l.add(toPaint, toPaint+time.Since(paintedAt), what) }) // runs after the frame
	}
	return l
}

func (l *FrameLog) add(painted, presented time.Duration, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.painted = append(l.painted, painted)
	l.presented = append(l.presented, presented)
	fmt.Fprintf(l.w, "frame: %.1f ms from hover to paint, %.1f ms to the frame's end (%s)\n", ms(painted), ms(presented), what)
}

// Summary is the median, the 90th percentile and the worst of the frames so far.
func (l *FrameLog) Summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.painted) == 0 {
		return "frames: none timed (no hover moved the query)"
	}
	return fmt.Sprintf("frames: %d hovers; hover to paint %s; to the frame's end %s", len(l.painted), spread(l.painted), spread(l.presented))
}

// spread is "median M ms, 90th percentile P ms, worst W ms" of ds.
func spread(ds []time.Duration) string {
	ts := slices.Clone(ds)
	slices.Sort(ts)
	at := func(p float64) time.Duration { return ts[min(len(ts)-1, int(p*float64(len(ts))))] }
	return fmt.Sprintf("median %.1f ms, 90th percentile %.1f ms, worst %.1f ms", ms(at(0.5)), ms(at(0.9)), ms(ts[len(ts)-1]))
}
