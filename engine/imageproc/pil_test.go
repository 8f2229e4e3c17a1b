// Tests against references made by PIL (testdata/pil, see its README).
// Invariants checked: a GIF decodes byte for byte as PIL's load_image makes
// it (frame 0 on the logical screen's page, the outside in the transparency
// index's colour or index 0's) and fails where PIL fails; a 16-bit PNG of
// RGB, RGBA or gray+alpha decodes as PIL's (the high byte), and a 16-bit
// gray one departs from PIL exactly as Decode documents: PIL clips a sample
// to 255, we keep its high byte. Mutation that would silently break them:
// filling a GIF's page with the background index, or returning the frame
// alone, fails TestGIFMatchesPIL; rounding 16-bit samples instead of taking
// the high byte fails TestPNG16AgainstPIL on 0x80FF.
package imageproc

import (
	"bytes"
	"compress/lzw"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type pilManifest struct {
	Pillow       string `json:"pillow"`
	Transformers string `json:"transformers"`
	Inputs       []struct {
		Input    string `json:"input"`
		OpenMode string `json:"open_mode"`
		OpenSize []int  `json:"open_size"`
		Ref      string `json:"ref"`
		Error    string `json:"error"`
	} `json:"inputs"`
}

func readPILManifest(t *testing.T) pilManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "pil", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m pilManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("testdata/pil/manifest.json: %v", err)
	}
	if m.Pillow == "" || len(m.Inputs) == 0 {
		t.Fatalf("testdata/pil/manifest.json names no Pillow version or no input")
	}
	return m
}

// readPPM reads a binary P6 file with maxval 255.
func readPPM(t *testing.T, path string) *RGB {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w, h, maxval int
	r := bytes.NewReader(raw)
	if _, err := fmt.Fscanf(r, "P6\n%d %d\n%d\n", &w, &h, &maxval); err != nil || maxval != 255 {
		t.Fatalf("%s: not a P6 file with maxval 255: %v", path, err)
	}
	pix := raw[len(raw)-r.Len():]
	if len(pix) != w*h*3 {
		t.Fatalf("%s: %d bytes of pixels for %dx%d", path, len(pix), w, h)
	}
	return &RGB{W: w, H: h, Pix: pix}
}

func TestGIFMatchesPIL(t *testing.T) {
	m := readPILManifest(t)
	n := 0
	for _, in := range m.Inputs {
		if !strings.HasSuffix(in.Input, ".gif") {
			continue
		}
		n++
		t.Run(in.Input, func(t *testing.T) {
			path := filepath.Join("testdata", "pil", in.Input)
			got, err := Load(path, DefaultLimits())
			if in.Error != "" {
				if err == nil {
					t.Fatalf("PIL %s fails (%s); we decoded %dx%d", m.Pillow, in.Error, got.W, got.H)
				}
				wantErr(t, err, path+": cannot decode image: gif: ")
				return
			}
			if err != nil {
				t.Fatalf("PIL %s decodes it: %v", m.Pillow, err)
			}
			want := readPPM(t, filepath.Join("testdata", "pil", in.Ref))
			if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("got %dx%d %v\nPIL %s: %dx%d %v", got.W, got.H, got.Pix, m.Pillow, want.W, want.H, want.Pix)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			wantPixels(t, "Decode of the same bytes", decodeOK(t, raw, in.Input), want.W, want.H, want.Pix...)
		})
	}
	if n < 14 {
		t.Fatalf("%d GIF references in testdata/pil, want the 14 make_refs.py writes", n)
	}
}

// TestPNG16AgainstPIL: RGB, RGBA and gray+alpha must equal PIL; for 16-bit
// gray (PIL's mode "I;16") the reference must be PIL's clip of each sample
// (so the departure documented is the one measured) and ours its high byte.
func TestPNG16AgainstPIL(t *testing.T) {
	m := readPILManifest(t)
	kinds := map[string]bool{}
	for _, in := range m.Inputs {
		if !strings.HasPrefix(in.Input, "png16_") {
			continue
		}
		t.Run(in.Input, func(t *testing.T) {
			path := filepath.Join("testdata", "pil", in.Input)
			got, err := Load(path, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			want := readPPM(t, filepath.Join("testdata", "pil", in.Ref))
			if in.OpenMode != "I;16" {
				kinds[in.OpenMode] = true
				if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
					t.Fatalf("got %v, PIL %s (mode %s) gives %v", got.Pix, m.Pillow, in.OpenMode, want.Pix)
				}
				if got.Note != "" {
					t.Errorf("a note where we equal PIL: %q", got.Note)
				}
				return
			}
			kinds["I;16"] = true
			if !strings.Contains(got.Note, "16-bit gray") || !strings.Contains(got.Note, "transformers") {
				t.Errorf("the departure from PIL is not said: note %q", got.Note)
			}
			samples := gray16Samples(t, path)
			clipped, high := 0, 0
			for i, v := range samples {
				if want.Pix[3*i] != uint8(min(v, 255)) {
					t.Fatalf("pixel %d: PIL %s gives %d for the sample %#04x, not the clip to 255 documented", i, m.Pillow, want.Pix[3*i], v)
				}
				if got.Pix[3*i] != uint8(v>>8) || got.Pix[3*i+1] != got.Pix[3*i] || got.Pix[3*i+2] != got.Pix[3*i] {
					t.Fatalf("pixel %d: got %v for the sample %#04x, want its high byte", i, got.Pix[3*i:3*i+3], v)
				}
				if v > 255 {
					clipped++
				}
				if v>>8 != 0 && v>>8 != 255 {
					high++
				}
			}
			if clipped == 0 || high == 0 {
				t.Fatalf("the samples %v do not tell the clip from the high byte", samples)
			}
		})
	}
	for _, k := range []string{"RGB", "RGBA", "I;16"} {
		if !kinds[k] {
			t.Errorf("no 16-bit PNG reference that PIL opens as mode %s", k)
		}
	}
}

// gray16Samples reads a 16-bit gray PNG's samples with image/png.
func gray16Samples(t *testing.T, path string) []uint16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	var out []uint16
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			switch m := img.(type) {
			case *image.Gray16:
				out = append(out, m.Gray16At(x, y).Y)
			case *image.NRGBA64: // with tRNS
				out = append(out, m.NRGBA64At(x, y).R)
			default:
				t.Fatalf("%s decodes as %T", path, img)
			}
		}
	}
	return out
}

// gifBytes is a GIF89a of a screen of sw x sh with a 4-colour global table
// and one frame at (x, y) of w x h, all of index 1.
func gifBytes(t *testing.T, sw, sh, x, y, w, h int) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, uint16(sw))
	b = binary.LittleEndian.AppendUint16(b, uint16(sh))
	b = append(b, 0x81, 0, 0, 9, 9, 9, 200, 100, 50, 0, 0, 0, 1, 2, 3)
	b = append(b, ',')
	for _, v := range []int{x, y, w, h} {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	b = append(b, 0, 2)
	var lz bytes.Buffer
	enc := lzw.NewWriter(&lz, lzw.LSB, 2)
	if _, err := enc.Write(bytes.Repeat([]byte{1}, w*h)); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	for d := lz.Bytes(); len(d) > 0; {
		k := min(len(d), 255)
		b = append(append(b, byte(k)), d[:k]...)
		d = d[k:]
	}
	return append(b, 0, ';')
}

// TestGIFPageCheckedAgainstLimits: the page is the screen grown to hold
// frame 0, and that is what the limit sees, before any allocation: a 2x2
// screen with a 1x1 frame at (60000, 60000) is a 60001x60001 page.
func TestGIFPageCheckedAgainstLimits(t *testing.T) {
	_, err := Decode(bytes.NewReader(gifBytes(t, 2, 2, 60000, 60000, 1, 1)), "far.gif", DefaultLimits())
	wantErr(t, err, "far.gif: image declares 60001x60001 pixels, more than the limit of 100000000")
	got := decodeOK(t, gifBytes(t, 2, 2, 2, 1, 1, 1), "grown.gif")
	wantPixels(t, "page grown to 3x2", got, 3, 2, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 200, 100, 50)
}
