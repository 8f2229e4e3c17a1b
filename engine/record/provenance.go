package record

// provenance.go: what a dump records about where its tensors came from, so a result can be
// trusted (or traced) later: the tool, the checkpoint and its config, the image, the page,
// the settings and interventions, and the attention rows' query.
//
// Invariant: every value is read from what the run actually used (the checkpoint's config
// as parsed, the page's grid, the settings as run, the ablation applied), and the files'
// hashes are of their bytes when the dump is written, named so.
// Mutation that would silently break it: recording the settings asked for instead of the
// session's (a narrowed Keep, a backend fallback): the metadata would describe another run.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/internal/fsx"
)

// Version is the inspector's version: set with -ldflags
// "-X github.com/turbospark/inspector/engine/record.Version=...", else the module's version,
// else "dev" (with the commit when the build recorded one).
var Version = buildVersion()

func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}

// provenance is the dump's metadata (safetensors __metadata__: strings only).
func (d *Dump) provenance(query int) map[string]string {
	c := d.config
	g := d.layout.Grids[0]
	settings, _ := json.Marshal(struct {
		Backend, Residency string
		TileRows, Threads  int
		MaxPixels          int
		Ablate, AblateMode string
		Mask               string
		KeyMask            string `json:",omitempty"`
		KeepTop            string `json:",omitempty"`
		PatchFrom          string `json:",omitempty"`
	}{d.settings.Backend, string(d.settings.Residency), d.settings.TileRows, d.settings.Threads, d.settings.MaxPixels,
		d.settings.Ablate.Heads, d.settings.Ablate.Mode, string(d.settings.Mask), d.settings.KeyMask.Spec(), d.settings.KeepTop.Spec(),
		d.settings.PatchFrom})
	m := map[string]string{
		"producer":    "turbospark inspector",
		"version":     Version,
		"checkpoint":  d.checkpoint,
		"model_type":  c.ModelType,
		"family":      c.Family(),
		"grid_thw":    fmt.Sprintf("%d,%d,%d", g.T, g.H, g.W),
		"patch_order": "pixel_values rows: merge windows row-major, patches row-major inside (every tensor's rows)",
		"settings":    string(settings),
		"backend":     d.backend,
	}
	m["config_sha256"] = fileHash(filepath.Join(d.checkpoint, "config.json"))
	var iv []string
	for _, it := range d.settings.Interventions() {
		iv = append(iv, it.Name)
	}
	m["interventions"] = "none"
	if len(iv) > 0 {
		m["interventions"] = strings.Join(iv, "; ")
	}
	if d.image != "" {
		m["image"] = d.image
		m["image_sha256"] = fileHash(d.image)
	}
	if p := d.page; p != nil {
		m["image_size"] = fmt.Sprintf("%dx%d", p.OrigW, p.OrigH)
		m["image_resized"] = fmt.Sprintf("%dx%d", p.Resized.W, p.Resized.H)
	}
	if query >= 0 {
		pos := d.layout.Pos[d.layout.RowOfProcessor(query)]
		m["attn_row_query"] = strconv.Itoa(query)
		m["attn_row_query_patch"] = fmt.Sprintf("row %d, col %d", pos.Row, pos.Col)
	}
	return m
}

// fileHash is the sha256 of path's bytes now, or why there is none.
func fileHash(path string) string {
	f, err := fsx.OpenRegular(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}
