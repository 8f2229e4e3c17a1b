package imageproc

import (
	"strings"
	"testing"
)

// Whatever min_pixels says, the page stays within max_pixels (transformers applies the
// max_pixels branch first); a config whose bounds make no sense is refused before anything
// is allocated.
func TestPageBoundedByMaxPixels(t *testing.T) {
	for _, c := range []struct{ h, w, min, max int }{
		{100, 100, 1e12, 16777216}, // a min_pixels of 1e12 asked for 3 TB
		{64, 64, 1 << 20, 1 << 16},
		{3000, 20, 1 << 24, 1 << 18},
	} {
		rh, rw, err := smartResize(c.h, c.w, 32, c.min, c.max)
		if err != nil {
			continue // refusing is fine too
		}
		if int64(rh)*int64(rw) > int64(max(c.max, 32*200*32)) { // HF's floor of one factor per side may pass max a little
			t.Errorf("%dx%d with min %d max %d resizes to %dx%d = %d pixels", c.h, c.w, c.min, c.max, rh, rw, rh*rw)
		}
	}
	cfg := QwenConfig()
	for _, bad := range []func(*Config){
		func(c *Config) { c.MinPixels = -1 },
		func(c *Config) { c.MaxPixels = MaxPagePixels + 1 },
		func(c *Config) { c.PatchSize = 1 << 20 },
		func(c *Config) { c.Std[1] = 1e-45 },
		func(c *Config) { c.RescaleFactor = 0 },
	} {
		c := cfg
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("accepted %+v", c)
		} else if !strings.Contains(err.Error(), "preprocess") {
			t.Errorf("error %q does not say what it is about", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the hub config: %v", err)
	}
}
