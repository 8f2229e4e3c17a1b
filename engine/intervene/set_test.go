package intervene

import (
	"reflect"
	"testing"
)

// Every field of Set is a tenant that List names when it is set (a field List left out would
// be applied by no run and named nowhere), and an empty Set lists none.
func TestSetListsEveryTenant(t *testing.T) {
	examples := map[string]any{
		"Ablate":    Ablation{Heads: "1:2"},
		"Mask":      Mask("rows:3"),
		"KeyMask":   KeyMask{Patches: "rows:3", Block: 1},
		"KeepTop":   KeepTop{K: 4, After: 1},
		"ScaleHead": ScaleHeads("1:2=0.5"),
		"PatchFrom": "a.png:blocks.1.out@rows:3",
	}
	typ := reflect.TypeFor[Set]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		ex, ok := examples[f.Name]
		if !ok {
			t.Fatalf("Set.%s has no example here: add one", f.Name)
		}
		var s Set
		reflect.ValueOf(&s).Elem().Field(i).Set(reflect.ValueOf(ex))
		if got := s.List(); len(got) != 1 || got[0].Name() == "" || got[0].Effect() == "" {
			t.Errorf("a Set with only %s lists %v", f.Name, got)
		}
	}
	if got := (Set{}).List(); len(got) != 0 {
		t.Errorf("the empty Set lists %v", got)
	}
}

// Each Kind's Set and Get agree, and its Example (Compare's form, "+" for ",") parses.
func TestKindsRoundTrip(t *testing.T) {
	for _, k := range Kinds() {
		var s Set
		if err := k.Set(&s, k.Example); err != nil {
			t.Fatalf("%s: its example %q: %v", k.Flag, k.Example, err)
		}
		got := k.Get(s)
		var again Set
		if err := k.Set(&again, got); err != nil || k.Get(again) != got || got == "" {
			t.Errorf("%s: %q gives %q, then %q (%v)", k.Flag, k.Example, got, k.Get(again), err)
		}
		if s.List()[0].Name() == "" {
			t.Errorf("%s: set, but List does not name it", k.Flag)
		}
	}
}
