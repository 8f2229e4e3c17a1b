package model_test

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/model"
	"github.com/turbospark/inspector/engine/model/qwen25vl"
	_ "github.com/turbospark/inspector/engine/model/qwen2vl"
	_ "github.com/turbospark/inspector/engine/model/qwen3vl"
)

// Every model type resolves to one family, whose table names every role it has and whose
// MLP form matches its hidden_act; a model type registered twice panics.
func TestRegistry(t *testing.T) {
	for _, mt := range strings.Split(model.ModelTypes(), ", ") {
		f := model.Lookup(mt)
		if f == nil || f.Block[model.RoleQKVW] == "" || f.Block[model.RoleFC1W] == "" || f.Block[model.RoleFC2W] == "" {
			t.Fatalf("%s: family %+v", mt, f)
		}
		if (f.Block[model.RoleUpW] != "") != f.Gated {
			t.Errorf("%s: an up projection %q, gated %v", mt, f.Block[model.RoleUpW], f.Gated)
		}
		if (f.Block[model.RoleNorm1B] == "") != f.RMSNorm {
			t.Errorf("%s: norm bias %q, RMS norms %v", mt, f.Block[model.RoleNorm1B], f.RMSNorm)
		}
	}
	if model.Lookup("llava") != nil {
		t.Error("an unknown model type resolved")
	}
	defer func() {
		if recover() == nil {
			t.Error("registering qwen2_5_vl twice did not panic")
		}
	}()
	model.Register(qwen25vl.Family)
}

// AttentionFLOPs counts QK^T and PV over each segment: one segment of S rows is the whole
// page's 4*S^2*D, windows only their own.
func TestAttentionFLOPs(t *testing.T) {
	c := model.Config{ModelType: "qwen2_5_vl", Hidden: 8}
	half, op := c.AttentionFLOPs([]backend.Segment{{Start: 0, End: 10}})
	if op != 4*10*10*8 || half != 2*10*8*3*8+op+2*10*8*8 {
		t.Errorf("one segment: half %v op %v", half, op)
	}
	half, op = c.AttentionFLOPs([]backend.Segment{{Start: 0, End: 4}, {Start: 4, End: 10}})
	if op != 4*(16+36)*8 || half != 2*10*8*3*8+op+2*10*8*8 {
		t.Errorf("two windows: half %v op %v", half, op)
	}
}
