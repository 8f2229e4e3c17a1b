package tower_test

import (
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/tower"
)

// TestSettingBounds: each numeric setting takes 0 (its default) and Lo..Hi, refuses the
// numbers just outside, and says which setting and what it wants; Validate names the
// setting, ValidateAs the caller's label (a CLI flag).
func TestSettingBounds(t *testing.T) {
	for _, b := range []tower.Bound{tower.TileBound, tower.ThreadsBound, tower.SlotsBound, tower.MaxPixelsBound} {
		for _, v := range []int{0, b.Lo, b.Hi} {
			if err := b.Check("", v); err != nil {
				t.Errorf("%s %d refused: %v", b.Name, v, err)
			}
		}
		for _, v := range []int{-1, b.Lo - 1, b.Hi + 1} {
			if v == 0 {
				continue
			}
			err := b.Check("", v)
			if err == nil || !strings.Contains(err.Error(), b.Name) || !strings.Contains(err.Error(), b.Zero) {
				t.Errorf("%s %d: %v", b.Name, v, err)
			}
		}
	}
	if tower.MaxPixelsBound.Lo != tower.MinMaxPixels || tower.MinMaxPixels != 1024 {
		t.Errorf("max pixels from %d (MinMaxPixels %d), want one 2x2 group of 16-px patches, 1024", tower.MaxPixelsBound.Lo, tower.MinMaxPixels)
	}
	s := tower.DefaultSettings("cpu")
	s.MaxPixels = 1023
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "max pixels 1023: want 1024 to") {
		t.Errorf("Validate of max pixels 1023: %v", err)
	}
	if err := s.ValidateAs(func(b tower.Bound) string { return "--" + b.Flag }); err == nil || !strings.Contains(err.Error(), "--max-pixels 1023: want 1024 to") {
		t.Errorf("ValidateAs of max pixels 1023: %v", err)
	}
	s.MaxPixels, s.Slots = 0, 1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "pread slots 1") {
		t.Errorf("Validate of 1 slot: %v", err)
	}
	s.Slots, s.Threads, s.TileRows = 0, 0, 0
	if err := s.Validate(); err != nil {
		t.Errorf("Validate of every default: %v", err)
	}
}
