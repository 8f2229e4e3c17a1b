package ui

// settings.go: the run settings — MLP tile (presets and free entry, with the tile buffer's
// memory), residency, backend, threads, max pixels — as a form used by the Settings tab and
// by both sides of Compare; and, in the Settings tab only, which more taps (engine/tower/tap.go)
// the next run keeps, with what each costs for the current page.
//
// Every control has a tooltip saying what it changes (tooltip.go).
//
// Invariant: a form's Settings() is exactly what its widgets show; the mutation that would
// silently break it: reading the tile from the preset list when the user typed a number.

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/control"
)

var (
	tilePresets      = []string{"1", "64", "128", "256", "512", "1024", "2048", "4096"}
	maxPixelPresets  = []string{"processor default", "65536", "262144", "1048576", "4194304", "16777216"}
	residencyChoices = []string{string(engine.Mapped), string(engine.Pread)}
)

// What each setting does, as its tooltip says.
const (
	tipTile = "Rows of patches the MLP runs at a time (fc1 → GELU → fc2 on one tile): changes the time and the tile buffer's " +
		"memory (shown on the right), never the outputs. A preset or any whole number of at least 1."
	tipResidency = "How the weights reach the engine. mapped: the safetensors files are memory-mapped and read on first touch, " +
		"no copy. pread: each block's weights are read into a ring of slots while the block before computes (less memory; " +
		"the Timings tab shows any stall). Never changes the outputs."
	tipBackend = "The compute backend: the CPU everywhere, Metal on Apple silicon with macOS 14 or later. " +
		"The backend changes the arithmetic: outputs may differ in the last bits."
	tipRetryMetal = "Metal failed its start-up check in a child process (a crash there cannot close the window), and that " +
		"is remembered until the app or macOS changes. Retry runs the check again now."
	tipThreads   = "CPU threads each op is spread over (0: every core). Changes the time, never the outputs."
	tipMaxPixels = "The resized image's pixel budget (smart_resize's max_pixels); processor default is the checkpoint's " +
		"preprocessor_config.json. Another budget is another page: more or fewer patches, and the query goes back to the centre."
	tipAblate = "Attention heads zeroed (or set to their page mean) where they enter proj, an intervention: BLOCK:HEAD " +
		"pairs, comma-separated, * for every head of a block. Empty: the plain tower. Not saved between sessions."
	tipAblateAs = "What an ablated head's output becomes: zero, or its mean over the page's patches."
	tipMask     = "Patches occluded at the input by the page's mean colour, an intervention: x0,y0,x1,y1 are patch " +
		"columns x0..x1-1 and rows y0..y1-1 (the grid's 'r R c C' hover tells a patch's place). Empty: none. Not saved between sessions."
	tipMaskKeys = "Patches no query attends to from a block on, an intervention (their keys masked, as an attention mask " +
		"does; they stay as queries): x0,y0,x1,y1@B masks patch columns x0..x1-1 and rows y0..y1-1 from block B. The " +
		"attention maps give them 0 from that block. Empty: none. Not saved between sessions."
	tipKeepTop = "Token dropping, an intervention: K@B keeps, after block B, only the K merged tokens (2x2 patches each) " +
		"that received the most attention in block B; the later blocks and the merger run on them alone. random:K@B keeps K " +
		"at random (the control). Dropped patches keep their state; the later maps leave them out. Empty: none. Not saved between sessions."
	tipApply = "Re-run the current checkpoint and image from block 0 under these settings; the query patch, the head and a " +
		"block you chose stay selected"
)

type settingsForm struct {
	tile      *widget.SelectEntry
	tileMem   *widget.Label
	residency *widget.RadioGroup
	backend   *widget.Select
	threads   *widget.Entry
	maxPixels *widget.SelectEntry
	interventionFields
	tileBytes func(tile int) int64 // the tile buffer at a tile size (0 before a load)
	backends  Backends
	why       *widget.Label  // what is not offered and why (empty when everything is)
	retry     *widget.Button // Retry Metal: shown where Backends.Retry can probe again
}

func newSettingsForm(tileBytes func(int) int64, backends Backends) *settingsForm {
	f := &settingsForm{tileBytes: tileBytes, backends: backends, interventionFields: newInterventionFields()}
	f.tileMem = widget.NewLabel("")
	f.tile = widget.NewSelectEntry(tilePresets)
	f.tile.OnChanged = func(string) { f.showTileMemory() }
	f.residency = widget.NewRadioGroup(residencyChoices, nil)
	f.residency.Horizontal = true
	f.backend = widget.NewSelect(backends.Names, nil)
	f.why = widget.NewLabel("")
	f.why.Wrapping = fyne.TextWrapWord
	f.retry = widget.NewButton("Retry Metal", nil)
	f.setBackends(backends)
	f.threads = widget.NewEntry()
	f.threads.SetPlaceHolder("0 = every core")
	f.maxPixels = widget.NewSelectEntry(maxPixelPresets)
	return f
}

// setBackends offers backends: the choices, what is not offered and why, and Retry where
// something can be probed again.
func (f *settingsForm) setBackends(b Backends) {
	f.backends = b
	selected := f.backend.Selected
	f.backend.Options = b.Names
	f.backend.Refresh()
	if selected != "" && b.Offers(selected) {
		f.backend.SetSelected(selected)
	}
	f.why.SetText(b.UnavailableNote())
	f.why.Hidden = f.why.Text == ""
	f.retry.Hidden = b.Retry == nil
	f.retry.Enable()
	f.why.Refresh()
	f.retry.Refresh()
}

func (f *settingsForm) form() *widget.Form {
	backend := container.NewVBox(withTip(f.backend, tipBackend), f.why, container.NewHBox(withTip(f.retry, tipRetryMetal)))
	return widget.NewForm(append([]*widget.FormItem{
		widget.NewFormItem("MLP tile rows", container.NewBorder(nil, nil, nil, f.tileMem, withTip(f.tile, tipTile))),
		widget.NewFormItem("residency", withTip(f.residency, tipResidency)),
		widget.NewFormItem("backend", backend),
		widget.NewFormItem("threads", withTip(f.threads, tipThreads)),
		widget.NewFormItem("max pixels", withTip(f.maxPixels, tipMaxPixels)),
	}, f.interventionFields.items()...)...)
}

func (f *settingsForm) load(s engine.Settings) {
	f.tile.SetText(strconv.Itoa(s.TileRows))
	f.residency.SetSelected(string(s.Residency))
	f.backend.SetSelected(s.Backend)
	f.threads.SetText(strconv.Itoa(s.Threads))
	if s.MaxPixels == 0 {
		f.maxPixels.SetText(maxPixelPresets[0])
	} else {
		f.maxPixels.SetText(strconv.Itoa(s.MaxPixels))
	}
	f.interventionFields.load(s)
	f.showTileMemory()
}

// Settings reads the form; an error names the field that does not parse.
func (f *settingsForm) Settings() (engine.Settings, error) {
	s := engine.Settings{Residency: engine.ResidencyMode(f.residency.Selected), Backend: f.backend.Selected}
	var err error
	if s.TileRows, err = formInt(f.tile.Text, engine.TileBound); err != nil {
		return s, err
	}
	if s.Threads, err = formInt(f.threads.Text, engine.ThreadsBound); err != nil {
		return s, err
	}
	if f.maxPixels.Text != maxPixelPresets[0] {
		if s.MaxPixels, err = formInt(f.maxPixels.Text, engine.MaxPixelsBound); err != nil {
			return s, err
		}
	}
	if !f.backends.Offers(s.Backend) {
		why := f.backends.Unavailable[s.Backend]
		if why == "" {
			why = "not offered"
		}
		return s, fmt.Errorf("backend %s is not available here: %s", s.Backend, why)
	}
	if _, err := engine.ParseResidency(string(s.Residency)); err != nil {
		return s, err
	}
	if _, err := f.interventionFields.read(&s); err != nil {
		return s, err
	}
	return s, nil
}

// formInt reads a field of the form as the setting b bounds (engine.Bound: the one check).
func formInt(text string, b engine.Bound) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a whole number, %s", b.Name, text, b.Wants())
	}
	return v, b.Check("", v)
}

// showTileMemory says what the typed tile's buffer takes for the current page.
func (f *settingsForm) showTileMemory() {
	t, err := strconv.Atoi(f.tile.Text)
	if err != nil || t < 1 || f.tileBytes(t) == 0 {
		f.tileMem.SetText("")
		return
	}
	f.tileMem.SetText("buffer " + engine.FormatBytes(f.tileBytes(t)))
}

type settingsPanel struct {
	in    *Inspector
	form  *settingsForm
	taps  map[engine.Tap]*widget.Check // the taps beyond engine.ProbeTaps, kept on request
	note  *widget.Label
	state *widget.Label // what the current run's settings cost: bytes read, stall, memory kept
}

// tapsNote says what keeping more taps does.
const tapsNote = "More taps: every block's value of each tap checked is kept for the next run (Apply), to show in " +
	"Activations and on the image and to export; q, k and out are always kept (attention maps, activations), within " +
	"the probe memory budget. ffn_act exists one MLP tile at a time: keeping it ends a pass and downloads after each " +
	"tile's GELU, so the MLP time is the sum of one pass per tile."

func newSettingsPanel(in *Inspector) *settingsPanel {
	p := &settingsPanel{in: in, form: newSettingsForm(in.tileBytes, in.Ctl.Backends()), taps: map[engine.Tap]*widget.Check{}}
	for _, t := range engine.Taps() {
		if !engine.ProbeTaps.Has(t) {
			p.taps[t] = widget.NewCheck(t.String(), nil)
		}
	}
	p.note = widget.NewLabel("Tile size, residency and threads change timings, never outputs (bit-identical by design); " +
		"the backend changes the arithmetic; max pixels changes the page. Apply re-runs from block 0.")
	p.note.Wrapping = fyne.TextWrapWord
	p.state = widget.NewLabel("")
	p.state.Wrapping = fyne.TextWrapWord
	p.form.load(in.Ctl.Backends().DefaultSettings())
	p.form.retry.OnTapped = func() {
		p.form.retry.Disable()
		in.say("checking Metal again in a child process…", nil)
		in.Ctl.RetryBackends()
	}
	in.Ctl.OnBackends = func(b Backends, err error) {
		p.form.setBackends(b)
		if err != nil {
			in.say("Metal: "+err.Error(), err)
			return
		}
		in.say("Metal passed its check: choose it under backend and Apply", nil)
	}
	return p
}

// moreTaps are the taps checked.
func (p *settingsPanel) moreTaps() engine.TapSet {
	var s engine.TapSet
	for t, c := range p.taps {
		if c.Checked {
			s |= engine.TapSetOf(t)
		}
	}
	return s
}

// showTapMemory labels each tap with what keeping it costs for the current page.
func (p *settingsPanel) showTapMemory() {
	for t, c := range p.taps {
		label := t.String()
		if m := tapMemory(p.in.Snap, t); m != "" {
			label += " (" + m + ")"
		}
		c.SetText(label)
	}
}

// refresh says what the current run's residency read and waited, and what the probes keep.
func (p *settingsPanel) refresh() {
	s := p.in.Snap
	p.showTapMemory()
	var read int64
	var wait float64
	for _, t := range s.Timings {
		read += t.BytesRead
		wait += ms(t.Wait)
	}
	c := s.Config
	keep := s.Settings.Keep.Set()
	kept := engine.ProbeBytes(c, s.Layout.Rows(), keep) / int64(max(c.Depth, 1)) * int64(s.Next)
	p.state.SetText(fmt.Sprintf("This run (%s), %d of %d blocks: %s of vision weights, %s read by pread, %.1f ms waiting for weights; "+
		"%d patches; MLP tile buffer %s; kept for the probes so far %s (taps %s).",
		s.Settings.Describe(), s.Next, c.Depth, engine.FormatBytes(s.WeightBytes), engine.FormatBytes(read), wait,
		s.Layout.Rows(), engine.FormatBytes(p.in.tileBytes(s.Settings.TileRows)),
		engine.FormatBytes(kept), control.KeptNames(keep)))
}

func (p *settingsPanel) content() fyne.CanvasObject {
	apply := widget.NewButton("Apply and re-run", p.apply)
	apply.Importance = widget.HighImportance
	var checks []fyne.CanvasObject
	for _, t := range engine.Taps() {
		if c := p.taps[t]; c != nil {
			checks = append(checks, withTip(c, "Keep "+t.String()+" of every block for the next run: "+t.About()))
		}
	}
	tapsNote := widget.NewLabel(tapsNote)
	tapsNote.Wrapping = fyne.TextWrapWord
	more := widget.NewForm(widget.NewFormItem("more taps", container.NewGridWithColumns(2, checks...)))
	return container.NewVBox(p.form.form(), more, tapsNote, withTip(apply, tipApply), p.note, widget.NewSeparator(), p.state)
}

// load shows s in the form and the taps it keeps beyond ProbeTaps in the checks.
func (p *settingsPanel) load(s engine.Settings) {
	p.form.load(s)
	keep := s.Keep.Set()
	for t, c := range p.taps {
		c.SetChecked(keep.Has(t))
	}
}

func (p *settingsPanel) apply() {
	s, err := p.form.Settings()
	if err != nil {
		p.in.say(err.Error(), err)
		return
	}
	s.Keep.Taps = p.moreTaps()
	p.in.Ctl.Apply(s)
}

// intermediate is the loaded model's MLP width (0 before a load).
func (in *Inspector) tileBytes(tile int) int64 {
	if !in.Snap.Loaded() {
		return 0
	}
	return in.Snap.Config.TileBytes(tile, in.Snap.Layout.Rows())
}
