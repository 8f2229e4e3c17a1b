package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gen")
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(synth.PresetNames(), ", "))
	out := fs.String("out", "", "output directory (created)")
	dtypeFlag := fs.String("dtype", "", "weight dtype: bf16, f16 or f32 (default: bf16; f32 for the demo)")
	seed := fs.Uint64("seed", 1, "random seed")
	force := fs.Bool("force", false, "replace a folder that is not empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out DIR is required")
	}
	var dt dtype.DType
	if *dtypeFlag != "" {
		var err error
		if dt, err = parseDType(*dtypeFlag); err != nil {
			return err
		}
	}
	cfg, err := synth.Preset(*preset)
	if err != nil {
		return err
	}
	if err := checkGenTarget(*out, *force); err != nil {
		return err
	}
	if err := checkGenMemory(*preset, cfg, dt); err != nil {
		return err
	}
	start := time.Now()
	if err := generateInto(*out, func(dir string) error {
		return synth.Generate(dir, *preset, synth.Options{DType: dt, Seed: *seed})
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: preset %s (%s, %d blocks x %d, %d heads) in %.1fs\n",
		*out, *preset, cfg.ModelType, cfg.Depth, cfg.Hidden, cfg.Heads, time.Since(start).Seconds())
	return nil
}

func parseDType(s string) (dtype.DType, error) {
	switch strings.ToLower(s) {
	case "bf16", "bfloat16":
		return dtype.BF16, nil
	case "f16", "fp16", "float16":
		return dtype.F16, nil
	case "f32", "fp32", "float32":
		return dtype.F32, nil
	}
	return "", fmt.Errorf("dtype %q: want bf16, f16 or f32", s)
}

// checkGenTarget refuses a target that is not a folder of its own (".", "a/..", the current
// folder or one holding it), a file, or a folder with something in it unless force; and
// even with force, a folder holding anything but a checkpoint gen could have written: gen
// never writes over a checkpoint someone has open, and --force never empties a folder of
// other files.
func checkGenTarget(out string, force bool) error {
	if err := ownFolder(out); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("--out %s: not a folder", out)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) > 0 && !force {
		return fmt.Errorf("--out %s: the folder is not empty (%d entries); add --force to replace it", out, len(ents))
	}
	var other []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !checkpointFile.MatchString(e.Name()) {
			other = append(other, entryName(e))
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("--out %s: --force replaces a checkpoint, and this folder holds more than one: %s; nothing was changed",
			out, listSome(other, 5))
	}
	return nil
}

// checkpointFile is what gen writes into a checkpoint, and what --force may replace: the
// configs, the weights, a shard index and shards.
var checkpointFile = regexp.MustCompile(`^(config\.json|preprocessor_config\.json|model\.safetensors|model\.safetensors\.index\.json|model-\d+-of-\d+\.safetensors)$`)

// ownFolder refuses an --out that is no folder of its own: ".", "..", "a/..", "/", the
// current folder or one above it (gen renames its new folder into place: these cannot be).
func ownFolder(out string) error {
	clean := filepath.Clean(out)
	base := filepath.Base(clean)
	abs, err := filepath.Abs(clean)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = r
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if base == "." || base == ".." || base == string(filepath.Separator) || cwd == abs || strings.HasPrefix(cwd, abs+string(filepath.Separator)) {
		return fmt.Errorf("--out %s: name a folder of the checkpoint's own (such as --out ck); gen writes a new folder and renames it into place, which the current folder or one above it cannot be", out)
	}
	return nil
}

// entryName is a folder entry's name, with a slash for a folder.
func entryName(e os.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// listSome lists at most n names, saying how many more there are.
func listSome(names []string, n int) string {
	s := strings.Join(names[:min(n, len(names))], ", ")
	if len(names) > n {
		s += fmt.Sprintf(" and %d more", len(names)-n)
	}
	return s
}

// generateInto writes a checkpoint into a new folder next to out and renames it into place,
// so a failed or interrupted gen leaves out as it was, and a window that has the old
// checkpoint mapped keeps reading the old files (they are replaced, never truncated).
func generateInto(out string, write func(dir string) error) error {
	parent, base := filepath.Split(filepath.Clean(out))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename; the leftovers of a failure otherwise
	if err := write(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(out); err == nil { // --force: the old folder goes after the new one is in
		old := tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return err
		}
		defer os.RemoveAll(old)
	}
	return os.Rename(tmp, out)
}

// checkGenMemory refuses a preset whose largest tensor would not fit in what the memory
// limits leave: gen holds one tensor at a time, in float32 and encoded.
func checkGenMemory(preset string, cfg engine.Config, dt dtype.DType) error {
	if dt == "" {
		dt = dtype.BF16
	}
	var largest int64
	for _, spec := range cfg.ExpectedTensors() {
		n := int64(1)
		for _, d := range spec.Shape {
			n *= int64(d)
		}
		largest = max(largest, n)
	}
	return engine.CheckHold(fmt.Sprintf("gen --preset %s: its largest tensor (%d values)", preset, largest), largest*int64(4+dt.Size()), 0)
}
