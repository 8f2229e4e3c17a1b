package intervene

// set.go: the registration of every tenant — a run's interventions as one comparable value
// (Set, which tower.Settings carries beside how the tower runs), listed in one order, and the
// table (Kinds) from which the CLI's flags, Compare's keys and the window's form are made for
// every tenant whose setting is one plain string.
//
// Invariant: List names every non-empty intervention of the set exactly once, in the order
// of Set's fields; an empty Set lists none (the plain tower).
// Mutation that would silently break it: a tenant missing from List — its runs would apply it
// (Plan is called from List) never, and name it nowhere (TestSetListsEveryTenant).

// Set is a run's interventions (what is done to the tower). Comparable, prints as typed.
type Set struct {
	Ablate    Ablation   // attention heads ablated (zero or page mean)
	Mask      Mask       // patches occluded at the input by the page's mean colour
	KeyMask   KeyMask    // patches no query attends to from a block on
	KeepTop   KeepTop    // tokens dropped after a block (the most attended, or random, go on)
	ScaleHead ScaleHeads // heads' outputs scaled where they enter proj
	// PatchFrom is activation patching, "IMAGE:blocks.B.out@PATCHES": block B's output at the
	// patches taken from IMAGE's run, or "IMAGE:blocks.B.attn.hH@PATCHES": head H's slice of
	// what block B's proj reads (the session applies it to every run); "" none.
	PatchFrom string
}

// List is the set's interventions, the empty ones left out, in Set's order: what a run plans
// (each Plan), and the one list Describe, the CLI's header, the window's status and captions
// and a dump's provenance read.
func (s Set) List() []Intervention {
	all := []Intervention{s.Ablate, s.Mask, s.KeyMask, s.KeepTop, s.ScaleHead, PatchFrom(s.PatchFrom)}
	var out []Intervention
	for _, iv := range all {
		if iv.Name() != "" {
			out = append(out, iv)
		}
	}
	return out
}

// None says whether the set changes nothing.
func (s Set) None() bool { return s == Set{} || len(s.List()) == 0 }

// Kind is a tenant whose setting is one string (text, never a file's name), as every surface
// offers it: a flag of `run`
// and `sweep`, a key of Compare's --a/--b, a field of the window's What if and Compare forms.
type Kind struct {
	Flag  string // the flag and Compare's key: "scale-head"
	Label string // the form's label: "scale heads"
	Usage string // the flag's help and the form's tip
	// Example is a value Compare's key takes ("," written "+" there).
	Example string
	Get     func(Set) string         // the setting as the flag takes it ("" none)
	Set     func(*Set, string) error // parses v into the set (refusing what the flag refuses)
}

// Kinds are the tenants every surface offers from this table (the others have surfaces of
// their own: a flag pair, a file of rows, a source image).
func Kinds() []Kind {
	return []Kind{{
		Flag:    "scale-head",
		Label:   "scale heads",
		Usage:   "scale attention heads where they enter proj: BLOCK:HEAD=FACTOR, comma-separated (e.g. 1:2=0.5,2:0=1.5: head 2 of block 1 halved, head 0 of block 2 times 1.5)",
		Example: "1:2=0.5+2:0=1.5",
		Get:     func(s Set) string { return string(s.ScaleHead) },
		Set: func(s *Set, v string) (err error) {
			s.ScaleHead, err = ParseScaleHeads(v)
			return err
		},
	}}
}
