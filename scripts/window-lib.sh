# window-lib.sh: sourced by the scripts that drive the real window under Xvfb
# (frame-times.sh, window-vs-cli.sh): one virtual display for the script, the window opened
# with fresh preferences on it, and the wait for its "ready" line (INSPECTOR_READY_LINE).
#
#   window_setup NAME TOOL...   check the tools and $bin, make $work, start Xvfb on $display,
#                               and clean both (and a window left open) up on exit
#   window_open ENV=VALUE...    open "$bin gui --checkpoint $ckpt --image $image" with these
#                               extra variables, stderr in $work/err; $app is its pid
#   window_ready POLL_S         wait until it announced its first finished run
#   window_close                stop it and wait for it

window_setup() {
	name=$1
	shift
	bin=${BIN:-bin/inspector}
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { echo "$name: needs $tool (apt-get install xvfb xdotool)" >&2; exit 1; }
	done
	[ -x "$bin" ] || { echo "$name: $bin not built (make build)" >&2; exit 1; }
	work=$(mktemp -d)
	display=:$((90 + $$ % 200))
	Xvfb "$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
	xvfb=$!
	app=
	trap window_cleanup EXIT INT TERM
	sleep 1
}

window_cleanup() {
	[ -n "$app" ] && kill "$app" 2>/dev/null || true
	kill "$xvfb" 2>/dev/null || true
	rm -rf "$work"
}

window_open() {
	rm -rf "$work/home"
	env HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache" FYNE_SCALE=1 \
		DISPLAY="$display" INSPECTOR_READY_LINE=1 "$@" "$bin" gui --checkpoint "$ckpt" --image "$image" 2>"$work/err" &
	app=$!
}

window_ready() {
	while ! grep -q '^inspector: ready' "$work/err"; do
		kill -0 "$app" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
		sleep "$1"
	done
}

window_close() {
	kill "$app" 2>/dev/null || true
	wait "$app" 2>/dev/null || true
	app=
}
