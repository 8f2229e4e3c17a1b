#!/bin/sh
# frame-times.sh: what following the pointer costs in the real window, as the user sees it.
# It opens CHECKPOINT on IMAGE in the window under Xvfb (fresh preferences, FYNE_SCALE=1),
# waits for the first run to finish, then holds Shift and moves the pointer to a new patch
# MOVES times with a pause between moves (latency, not throughput): first with the mean of
# heads shown, then head 3. INSPECTOR_FRAME_TIMES makes the window time each move from the
# pointer event to the paint of the frame that shows its map and to that frame's end, once
# it is swapped to the screen (ui/frames.go); this prints the median, 90th percentile and
# worst of both for each, from those lines.
#
#   scripts/frame-times.sh CHECKPOINT IMAGE [MOVES] [PAUSE_S]
#
# For the 8B tower's 5,120 patches: `bin/inspector gen --preset qwen3-vl-8b --out /tmp/8b`
# and a 1280x1024 image (80 x 64 patches of 16 px). Needs Xvfb and xdotool.
set -eu
[ $# -ge 2 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
ckpt=$1 image=$2 moves=${3:-40} pause=${4:-0.3}
. "$(dirname "$0")/window-lib.sh"
window_setup frame-times Xvfb xdotool
export DISPLAY=$display
window_open INSPECTOR_FRAME_TIMES=1
echo "frame-times: waiting for the first run of $ckpt on $image…" >&2
window_ready 2
# inspector: ready; image view at X,Y size WxH; ...
set -- $(sed -n 's/^inspector: ready; image view at \([0-9]*\),\([0-9]*\) size \([0-9]*\)x\([0-9]*\);.*/\1 \2 \3 \4/p' "$work/err")
gx=$1 gy=$2 gw=$3 gh=$4
# The window finishes what the run left to its background jobs (the block x head chart's
# statistics, 2-5 s at 5,120 patches on 2 cores) before the sweep: steady state, not
# contention with them (SETTLE=0 to time that too).
sleep "${SETTLE:-20}"
win=$(xdotool search --sync --onlyvisible --name "TurboSpark Vision Inspector" | head -1)
sweep() { # moves over a zigzag of distinct patches, Shift held
	xdotool mousemove --window "$win" $((gx + gw / 2)) $((gy + gh / 2))
	sleep 1
	xdotool keydown shift
	i=0
	while [ $i -lt "$moves" ]; do
		x=$((gx + gw * (5 + (i * 37) % 90) / 100))
		y=$((gy + gh * (5 + (i * 53) % 90) / 100))
		xdotool mousemove --window "$win" $x $y
		sleep "$pause"
		i=$((i + 1))
	done
	xdotool keyup shift
	sleep 2
}
sweep                                         # the mean of heads (the default)
xdotool key equal equal equal equal; sleep 2 # head 3
sweep
xdotool key ctrl+q
wait "$app" || true
app=
stats() { # median, 90th percentile and worst of the numbers on stdin
	sort -n | awk '{ t[NR] = $1 } END {
		if (NR == 0) { printf "no frames"; exit }
		p90 = int(NR * 0.9); if (p90 < 1) p90 = 1
		printf "%3d frames, median %6.1f ms, 90th pct %6.1f ms, worst %6.1f ms", NR, (t[int((NR + 1) / 2)] + t[int(NR / 2) + 1]) / 2, t[p90], t[NR] }'
}
summarize() {
	# frame: P ms from hover to paint, E ms to the frame's end (WHAT)
	lines=$(grep "^frame: .*($1," "$work/err" || true)
	printf '%-26s to paint:       %s\n' "$1" "$(echo "$lines" | grep . | awk '{print $2}' | stats)"
	printf '%-26s to frame'"'"'s end: %s\n' "" "$(echo "$lines" | grep . | awk '{print $8}' | stats)"
}
grep '^frame: ' "$work/err" | head -1 | sed 's/.*(\(.*\))/frame-times: \1/'
summarize "attention, mean of heads"
summarize "attention, head 3"
