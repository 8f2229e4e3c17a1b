// Package model is the room of the model families: what one family's vision tower is, as
// data the rest of the engine reads. A family lives in a folder of its own under this one
// (qwen3vl, qwen2vl, qwen25vl) and registers itself here; the engine imports every family
// folder (engine/ckpt/config.go). Config (config.go) is a tower's shape as config.json gives it,
// and answers every family question through its family: the tensors of each weight role
// (tensors.go), the norms, the MLP and its activation, the patch embedding, the position
// table, how a page's rows are arranged and which blocks attend within windows. The graph,
// residency, probes, memory, bench, synth and the window read the Config; none of them names
// a family.
//
// Invariant: a family lists its tensor names in the role order of Role*, so a slot index means
// the same weight in every family ("" for a role the family has not).
// Mutation that would silently break it: a family listing its MLP's two products in the other
// order (fc2 as RoleFC1W): for a square MLP every shape check passes and the tower runs fc2
// first (each family's parity test against transformers catches it).
package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/geom"
)

// Weight roles of a block, in the order a pread slot holds them.
const (
	RoleNorm1W = iota
	RoleNorm1B
	RoleQKVW
	RoleQKVB
	RoleProjW
	RoleProjB
	RoleNorm2W
	RoleNorm2B
	RoleFC1W // a gated MLP's gate
	RoleFC1B
	RoleFC2W // a gated MLP's down projection
	RoleFC2B
	RoleUpW // a gated MLP's up projection (Qwen2.5-VL); "" in an ungated family
	RoleUpB
	Roles // the number of roles
)

// Family is one model family's facts.
type Family struct {
	Name       string   // for people: "Qwen2-VL"
	ModelTypes []string // config.json's model_type values it covers
	// Block is a block's tensor suffixes by role (Role*); "" for a role the family has not.
	Block [Roles]string
	// Merger is the final merger's six tensor suffixes: norm weight, norm bias, fc1 w, b, fc2
	// w, b; "" for the norm bias of an RMS norm.
	Merger [6]string
	// WidthNames are config.json's names of the block width, the MLP width and the merger's
	// output, for messages.
	WidthNames [3]string
	PatchBias  bool             // the patch embedding (Conv3d) has a bias
	PosTable   bool             // a learned position table (num_position_embeddings) is added
	RMSNorm    bool             // RMS norms (weight only), not LayerNorms
	Gated      bool             // the MLP is down(act(gate(x)) * up(x)), not fc2(act(fc1(x)))
	MLPAct     string           // vision_config.hidden_act it runs
	MLPForm    backend.GELUForm // and the matmul epilogue's form that computes it
	// Vision reads what the shared fields do not say from vision_config into c: the widths,
	// the patch size, the position table, deepstack, windows.
	Vision func(v *VisionJSON, c *Config) error
	// Check (nil: none) checks what only this family's fields can get wrong, after the shared
	// checks passed.
	Check func(c Config) error
	// Deepstack (nil: never) says whether a model type keeps deepstack mergers.
	Deepstack func(modelType string) bool
	// Arrange (nil: the processor's order, every block attending within whole frames) orders a
	// page's rows and sets its blocks' attention segments (geom.Layout.SetWindows).
	Arrange func(c Config, lay *geom.Layout) error
	// Defaults fills what the family's released towers share and a gen preset leaves out
	// (patch size, activation, rope theta, in channels, merge and temporal sizes).
	Defaults func(c *Config)
	// Files are config.json and preprocessor_config.json as the family's hub repos write them,
	// for c with weights of torchDType ("bfloat16"): what gen writes beside random weights.
	Files func(c Config, torchDType string) (config, preprocessor map[string]any, err error)
}

// SharedDefaults fills the fields every family's released towers share: 3 channels, temporal
// patches of 2, 2x2 merge units, rope theta 10000.
func SharedDefaults(c *Config) {
	c.InChannels, c.TemporalPatchSize, c.MergeSize, c.RopeTheta = 3, 2, 2, 10000
}

var families []*Family

// Register adds a family (a family folder's init). A model type claimed twice panics.
func Register(f *Family) {
	for _, mt := range f.ModelTypes {
		if Lookup(mt) != nil {
			panic(fmt.Sprintf("model: model_type %q registered twice", mt))
		}
	}
	families = append(families, f)
}

// Lookup is the family of a config.json model_type, or nil.
func Lookup(modelType string) *Family {
	for _, f := range families {
		if slices.Contains(f.ModelTypes, modelType) {
			return f
		}
	}
	return nil
}

// ModelTypes lists every registered model_type, for messages.
func ModelTypes() string {
	var all []string
	for _, f := range families {
		all = append(all, f.ModelTypes...)
	}
	return strings.Join(all, ", ")
}

// SupportedFamilies names every registered family with its model_type values, for people:
// "Qwen3-VL / Qwen3.5 (qwen3_vl, ...), Qwen2-VL (qwen2_vl), ...".
func SupportedFamilies() string {
	var parts []string
	for _, f := range families {
		parts = append(parts, fmt.Sprintf("%s (%s)", f.Name, strings.Join(f.ModelTypes, ", ")))
	}
	return strings.Join(parts, ", ")
}
