package ui

// frames.go: the follow-mouse frame-time probe. Each hover that moved the query to another
// patch is timed from the pointer event to the paint of the frame that shows its map
// (widgets.ImageView.OnFrame); the log writes one line per frame and, at the end, the median,
// the 90th percentile and the count. The window turns it on for INSPECTOR_FRAME_TIMES.
//
// Invariant: a logged time runs from the event to the paint, never from the map's arrival:
// the row's computation, the overlay and the GL upload are all in it. Mutation that would
// silently break it: stamping the time when SetOverlayScale is called — the figures would
// leave out the probe's work and read as fast as the window wants to look.

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// FrameLog collects the follow-mouse frame times of one window.
type FrameLog struct {
	mu    sync.Mutex
	w     io.Writer
	times []time.Duration
}

// LogFrames times every hover to its painted frame, writing a line to w for each.
func (in *Inspector) LogFrames(w io.Writer) *FrameLog {
	l := &FrameLog{w: w}
	in.image.view.OnFrame = func(d time.Duration) { // on the painting (UI) goroutine
		what := fmt.Sprintf("%s, %s", in.Sel.Overlay, headName(in.Sel.Head))
		if in.Snap.Loaded() {
			what += fmt.Sprintf(", %d patches", in.Snap.Layout.Rows())
		}
		l.add(d, what)
	}
	return l
}

func (l *FrameLog) add(d time.Duration, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.times = append(l.times, d)
	fmt.Fprintf(l.w, "frame: %.1f ms from hover to paint (%s)\n", ms(d), what)
}

// Summary is the median, the 90th percentile and the count of the frames so far.
func (l *FrameLog) Summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.times) == 0 {
		return "frames: none timed (no hover moved the query)"
	}
	ts := slices.Clone(l.times)
	slices.Sort(ts)
	at := func(p float64) time.Duration { return ts[min(len(ts)-1, int(p*float64(len(ts))))] }
	return fmt.Sprintf("frames: %d hovers, hover to paint median %.1f ms, 90th percentile %.1f ms, worst %.1f ms",
		len(ts), ms(at(0.5)), ms(at(0.9)), ms(ts[len(ts)-1]))
}
