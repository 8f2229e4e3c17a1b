package engine

// interventions.go: the engine's face for the interventions (engine/intervene holds them and
// their seam): the names app, ui and the tests use, as aliases.

import "github.com/turbospark/inspector/engine/intervene"

// The intervention settings (intervene's tenants).
type (
	Ablation   = intervene.Ablation
	Mask       = intervene.Mask
	KeyMask    = intervene.KeyMask
	KeepTop    = intervene.KeepTop
	ScaleHeads = intervene.ScaleHeads
)

// Ablation modes.
const (
	AblateZero = intervene.AblateZero
	AblateMean = intervene.AblateMean
)

// The settings' parsers and the error messages' quoting.
var (
	ParseAblation   = intervene.ParseAblation
	ParseMask       = intervene.ParseMask
	ParseKeyMask    = intervene.ParseKeyMask
	ParseKeepTop    = intervene.ParseKeepTop
	ParseScaleHeads = intervene.ParseScaleHeads
	ParsePatchFrom  = intervene.ParsePatchFrom
	QuoteShort      = intervene.QuoteShort
)
