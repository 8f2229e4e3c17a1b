#!/bin/sh
# window-vs-cli.sh: what the window adds to a Run all, against the CLI's run of the same
# checkpoint, image and settings. Each pair runs `inspector run` and the window's first run
# (under Xvfb, fresh preferences) back to back, the order alternating (CLI first, then
# window first, ...), and compares their spans: the host-clock time from the embedding's
# start to the merger's end (engine.Report.SpanMS; the window's from its ready line). It
# prints each pair and the median, min and max of window/CLI over the pairs.
#
#   scripts/window-vs-cli.sh CHECKPOINT IMAGE [PAIRS] [-- RUN FLAGS...]
#
# RUN FLAGS (e.g. --tile 512 --threads 2) go to the CLI; the window runs its defaults, which
# are the CLI's, so give flags only with matching window settings. Needs Xvfb.
set -eu
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
ckpt=$1 image=$2
shift 2
pairs=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then pairs=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
. "$(dirname "$0")/window-lib.sh"
window_setup window-vs-cli Xvfb

cli_span() { # the CLI run's span in ms
	"$bin" run --checkpoint "$ckpt" --image "$image" --json "$work/run.json" "$@" >/dev/null
	tr -d ' \n' <"$work/run.json" | sed 's/"blocks":\[.*\]//' | awk -F'[,{}]' '
		{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/"/, "", kv[1]); v[kv[1]] = kv[2] } }
		END { printf "%.1f\n", v["merger_at_ms"] + v["merger_ms"] - v["embed_at_ms"] }'
}

window_span() { # the window's first run: span, work and time lent, in ms
	window_open
	window_ready 0.5
	window_close
	sed -n 's/^inspector: ready;.*run span \([0-9.]*\) ms, work \([0-9.]*\) ms, lent to the window \([0-9.]*\) ms.*/\1 \2 \3/p' "$work/err"
}

echo "window-vs-cli: $pairs pairs of $ckpt on $image" >&2
i=0
: >"$work/ratios"
while [ $i -lt "$pairs" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		c=$(cli_span "$@")
		window_span >"$work/ws"
	else
		window_span >"$work/ws"
		c=$(cli_span "$@")
	fi
	read -r w work_ms lent <"$work/ws"
	echo "$w $c" | awk -v n=$((i + 1)) -v work="$work_ms" -v lent="$lent" \
		'{ printf "pair %d: CLI %.0f ms, window %.0f ms (work %.0f, lent %.0f): %.3fx\n", n, $2, $1, work, lent, $1 / $2 }'
	echo "$w $c" | awk '{ printf "%.4f\n", $1 / $2 }' >>"$work/ratios"
	i=$((i + 1))
done
sort -n "$work/ratios" | awk '{ r[NR] = $1 } END { printf "window/CLI over %d pairs: median %.3fx, min %.3fx, max %.3fx\n", NR, (r[int((NR + 1) / 2)] + r[int(NR / 2) + 1]) / 2, r[1], r[NR] }'
