package ui

// interventions.go: the fields of the interventions a user types (heads ablated and as
// what, patches occluded at the input, patches masked as keys, tokens dropped, and one field
// per tenant of intervene's table: heads scaled), one set per form: the Settings tab, both
// Compare sides and the What if tab make, load and read them here.
//
// Invariant: every form shows, loads and parses the interventions the same way. Mutation
// that would silently break it: one form reading the ablation mode from its own radio group
// while another defaults it (the same text ablates differently).

import (
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/intervene"
)

type interventionFields struct {
	ablate   *widget.Entry      // heads ablated: BLOCK:HEAD pairs ("" none)
	ablateAs *widget.RadioGroup // zero or mean
	mask     *widget.Entry      // patches occluded: x0,y0,x1,y1 ("" none)
	maskKeys *widget.Entry      // patches masked as keys from a block on: x0,y0,x1,y1@B ("" none)
	keepTop  *widget.Entry      // tokens dropped: K@B, random:K@B ("" none)
	kinds    []*widget.Entry    // one per tenant of intervene.Kinds, in its order
}

func newInterventionFields() interventionFields {
	f := interventionFields{ablate: widget.NewEntry(), mask: widget.NewEntry(), maskKeys: widget.NewEntry(), keepTop: widget.NewEntry(),
		ablateAs: widget.NewRadioGroup([]string{engine.AblateZero, engine.AblateMean}, nil)}
	f.ablate.SetPlaceHolder("e.g. 3:5,7:*")
	f.ablateAs.Horizontal = true
	f.ablateAs.SetSelected(engine.AblateZero)
	f.mask.SetPlaceHolder("x0,y0,x1,y1")
	f.maskKeys.SetPlaceHolder("x0,y0,x1,y1@block")
	f.keepTop.SetPlaceHolder("tokens@block, e.g. 64@3")
	for _, k := range intervene.Kinds() {
		e := widget.NewEntry()
		e.SetPlaceHolder("e.g. " + strings.ReplaceAll(k.Example, "+", ","))
		f.kinds = append(f.kinds, e)
	}
	return f
}

// items are the fields' rows of a form.
func (f interventionFields) items() []*widget.FormItem {
	items := []*widget.FormItem{
		widget.NewFormItem("ablate heads", withTip(f.ablate, tipAblate)),
		widget.NewFormItem("ablated as", withTip(f.ablateAs, tipAblateAs)),
		widget.NewFormItem("mask patches", withTip(f.mask, tipMask)),
		widget.NewFormItem("mask as keys", withTip(f.maskKeys, tipMaskKeys)),
		widget.NewFormItem("keep top", withTip(f.keepTop, tipKeepTop)),
	}
	for i, k := range intervene.Kinds() {
		items = append(items, widget.NewFormItem(k.Label, withTip(f.kinds[i], "An intervention: "+k.Usage+".")))
	}
	return items
}

// load shows s's interventions.
func (f interventionFields) load(s engine.Settings) {
	f.ablate.SetText(s.Ablate.Heads)
	f.mask.SetText(strings.TrimPrefix(string(s.Mask), "rect:"))
	f.maskKeys.SetText(s.KeyMask.Spec())
	f.keepTop.SetText(s.KeepTop.Spec())
	for i, k := range intervene.Kinds() {
		f.kinds[i].SetText(k.Get(s.Set))
	}
	if s.Ablate.Mode == "" {
		f.ablateAs.SetSelected(engine.AblateZero)
	} else {
		f.ablateAs.SetSelected(s.Ablate.Mode)
	}
}

// read puts the fields' interventions into s; an error comes with the field's label.
func (f interventionFields) read(s *engine.Settings) (field string, err error) {
	if s.Ablate, err = engine.ParseAblation(f.ablate.Text, f.ablateAs.Selected); err != nil {
		return "ablate heads", err
	}
	if s.Mask, err = engine.ParseMask(f.mask.Text); err != nil {
		return "mask patches", err
	}
	if s.KeyMask, err = engine.ParseKeyMask(f.maskKeys.Text); err != nil {
		return "mask as keys", err
	}
	if s.KeepTop, err = engine.ParseKeepTop(f.keepTop.Text); err != nil {
		return "keep top", err
	}
	for i, k := range intervene.Kinds() {
		if err := k.Set(&s.Set, f.kinds[i].Text); err != nil {
			return k.Label, err
		}
	}
	return "", nil
}
