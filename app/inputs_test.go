package main

// inputs_test.go: every file a command reads is an input no output of it may replace. The
// table below says, for every flag of every command, whether it names a file the command
// reads ("in"), a spec that holds such a file ("in-spec"), a file it writes ("out"), or none
// (""). TestEveryFlagIsClassified lists each command's flags from its own -h and fails on a
// flag the table does not know (a new flag must say what it is); TestEveryFileFlagIsAnInput
// points each output flag at each input, directly and through a symlink, and wants a refusal
// that names the output flag, with the input unchanged.

import (
	"github.com/turbospark/inspector/engine/intervene"

	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/cpu"
)

var fileFlags = map[string]map[string]string{
	"run": {"checkpoint": "in", "image": "in", "patch-from": "in-spec", "mask-patches": "in-spec", "mask-keys": "in-spec",
		"dump": "out", "json": "out", "trace": "out",
		"ablate": "", "ablate-mode": "", "attention-query": "", "backend": "", "keep-top": "", "max-memory": "", "max-pixels": "",
		"quiet": "", "residency": "", "slots": "", "taps": "", "threads": "", "tile": ""},
	"compare": {"checkpoint": "in", "image": "in", "json": "out", "a": "", "b": "", "blocks": "", "max-reps": "", "reps": ""},
	"sweep":   {"checkpoint": "in", "image": "in", "out": "out", "ablate-mode": "", "backend": "", "max-pixels": "", "over": ""},
	"bench": {"checkpoint": "in", "json": "out", "cpuprofile": "out", "backend": "", "blocks": "", "gemm": "", "loops": "", "one": "",
		"patches": "", "residency": "", "threads": "", "tile": ""},
	"gpumodel": {"checkpoint": "in", "json": "out", "blocks": "", "gpu": "", "patches": "", "tile": ""},
	"selftest": {"report": "out", "backend": "", "metal-child": "", "no-times": ""},
	"gen":      {"out": "out", "dtype": "", "force": "", "preset": "", "seed": ""},
	"verify":   {"checkpoint": "in", "dump": "in"},
	"gui":      {"checkpoint": "in", "image": "in", "demo": ""},
	"ceiling":  {"json": "", "seconds": "", "threads": ""},
}

// The flags run makes from intervene's table name no file (a Kind's value is text).
func init() {
	for _, k := range intervene.Kinds() {
		fileFlags["run"][k.Flag] = ""
	}
}

var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// commandFlags are a command's flags, as bin's -h lists them.
func commandFlags(t *testing.T, bin, name string) []string {
	out, _ := exec.Command(bin, name, "-h").CombinedOutput()
	var flags []string
	for _, m := range flagLine.FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, m[1])
	}
	if len(flags) == 0 {
		t.Fatalf("%s -h lists no flags:\n%s", name, out)
	}
	return flags
}

func TestEveryFlagIsClassified(t *testing.T) {
	bin := buildInspectorTags(t, "")
	for _, c := range commands {
		if c.hidden {
			continue
		}
		table, ok := fileFlags[c.name]
		if !ok {
			t.Errorf("command %s: say in fileFlags which of its flags name files", c.name)
			continue
		}
		for _, f := range commandFlags(t, bin, c.name) {
			if _, ok := table[f]; !ok {
				t.Errorf("%s --%s: say in fileFlags whether it names a file the command reads (in, in-spec) or writes (out)", c.name, f)
			}
		}
	}
}

// inputValue is the value an input flag takes when its file is path, and the args every run
// of the command needs besides (a checkpoint folder and an image of their own).
func inputValue(flag, path string) string {
	switch flag {
	case "patch-from":
		return path + ":blocks.1.out@0,0,2,2"
	case "mask-keys":
		return path + "@1"
	}
	return path
}

func TestEveryFileFlagIsAnInput(t *testing.T) {
	for _, c := range commands {
		table := fileFlags[c.name]
		var ins, outs []string
		for f, kind := range table {
			switch kind {
			case "in", "in-spec":
				ins = append(ins, f)
			case "out":
				outs = append(outs, f)
			}
		}
		slices.Sort(ins)
		slices.Sort(outs)
		for _, in := range ins {
			for i, out := range outs {
				dir := t.TempDir()
				ckpt, image := copyDemo(t, dir)
				args := map[string]string{"checkpoint": ckpt, "image": image}
				if _, ok := table["image"]; !ok {
					delete(args, "image")
				}
				var victim string // the file the output flag is pointed at
				switch in {
				case "checkpoint":
					victim = filepath.Join(ckpt, "config.json")
				case "mask-patches", "mask-keys":
					victim = filepath.Join(dir, "mask.txt")
					os.WriteFile(victim, []byte("0,1,2\n"), 0o644)
					args[in] = inputValue(in, victim)
				case "dump": // verify: no outputs
					continue
				default:
					victim = filepath.Join(dir, "other.png")
					copyInput(t, image, victim)
					args[in] = inputValue(in, victim)
				}
				target := victim
				if i%2 == 1 { // through a symlink
					target = filepath.Join(dir, "link")
					if err := os.Symlink(victim, target); err != nil {
						t.Fatal(err)
					}
				}
				args[out] = target
				argv := []string{c.name}
				for k, v := range args {
					argv = append(argv, "--"+k, v)
				}
				before, _ := os.ReadFile(victim)
				var stdout, stderr bytes.Buffer
				rc := realMain(argv, &stdout, &stderr)
				after, _ := os.ReadFile(victim)
				if rc == 0 || !strings.Contains(stderr.String(), "--"+out) {
					t.Errorf("%s --%s over --%s's file: exit %d, stderr %q (want a refusal naming --%s)", c.name, out, in, rc, stderr.String(), out)
				}
				if !bytes.Equal(before, after) {
					t.Errorf("%s --%s over --%s's file: the input changed", c.name, out, in)
				}
			}
		}
	}
}

// The program's own executable is an input: selftest --report over it (selftest's children run
// from it) is refused and the binary stays.
func TestTheExecutableIsAnInput(t *testing.T) {
	bin := buildInspectorTags(t, "")
	before, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"selftest", "--backend", cpu.Name, "--no-times", "--report", bin},
		{"run", "--checkpoint", "../assets/demo", "--image", "../assets/sample.png", "--json", bin}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "would overwrite an input") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	if after, _ := os.ReadFile(bin); !bytes.Equal(before, after) {
		t.Error("the executable was replaced")
	}
}

// copyDemo copies the demo checkpoint and photo into dir.
func copyDemo(t *testing.T, dir string) (ckpt, image string) {
	t.Helper()
	ckpt = filepath.Join(dir, "demo")
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("../assets/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			copyInput(t, filepath.Join("../assets/demo", e.Name()), filepath.Join(ckpt, e.Name()))
		}
	}
	image = filepath.Join(dir, "photo.png")
	copyInput(t, "../assets/sample.png", image)
	return ckpt, image
}

func copyInput(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
