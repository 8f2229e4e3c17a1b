// Huge-input tests. Invariant checked: Load and Decode read the header, then
// at most what the declared size can need, never the whole input: a 2 GiB
// file (sparse, so the disk does not pay for it) or a 2 GiB stream costs a
// few MB of allocation whether it is junk (a clear error naming the file) or
// a small valid image followed by junk (the image, as PIL would give it).
// Mutation that would silently break it: reading the input with io.ReadAll
// under the old cap of MaxPixels*8+64 MiB before the header check allocates
// about 1.7 GB for each of these inputs and fails the 32 MiB bound here.
package imageproc

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

const hugeSize = 2 << 30

// allocBound is what decoding a small image, or refusing junk, may allocate.
const allocBound = 32 << 20

// allocatedBy returns the bytes f allocated (runtime.MemStats.TotalAlloc).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sparseFile writes head and extends the file to size with a hole.
func sparseFile(t *testing.T, name string, head []byte, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	return p
}

func junk(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func smallImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 12))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

func TestHugeFilesReadOnlyWhatTheyNeed(t *testing.T) {
	small := smallImage()
	pngData := encodePNG(t, small)
	var jb, gb bytes.Buffer
	if err := jpeg.Encode(&jb, small, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	pal := image.NewPaletted(small.Bounds(), color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{90, 160, 250, 255}})
	pal.Pix[5] = 1
	if err := gif.Encode(&gb, pal, nil); err != nil {
		t.Fatal(err)
	}
	ihdr := hugePNGHeader(16, 16)[:33] // signature and IHDR, then nothing but zeros
	farTIFF := binary.LittleEndian.AppendUint32([]byte("II*\x00"), 1<<30)
	gifHead := append([]byte("GIF89a\x10\x00\x10\x00\x80\x00\x00"), 1, 2, 3, 4, 5, 6)

	for _, c := range []struct {
		name string
		head []byte
		ok   bool // a valid image followed by zeros: decodes as the image alone
	}{
		{"junk.png", junk(1 << 16), false},
		{"header-only.png", ihdr, false},
		{"zeros.jpg", []byte{0xFF, 0xD8}, false},
		{"far-directory.tif", farTIFF, false},
		{"zeros.gif", gifHead, false},
		{"padded.png", pngData, true},
		{"padded.jpg", jb.Bytes(), true},
		{"padded.gif", gb.Bytes(), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := sparseFile(t, c.name, c.head, hugeSize)
			var got *RGB
			var err error
			alloc := allocatedBy(func() { got, err = Load(p, DefaultLimits()) })
			t.Logf("allocated %d bytes; error: %v", alloc, err)
			if alloc > allocBound {
				t.Errorf("Load of a %d-byte file allocated %d bytes", int64(hugeSize), alloc)
			}
			if !c.ok {
				wantErr(t, err, p+": cannot decode image")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := decodeOK(t, c.head, c.name)
			wantPixels(t, "padded", got, want.W, want.H, want.Pix...)
		})
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestDecodeStreamReadsOnlyWhatItNeeds(t *testing.T) {
	pngData := encodePNG(t, smallImage())
	want := decodeOK(t, pngData, "small.png")
	var got *RGB
	var err error
	alloc := allocatedBy(func() {
		got, err = Decode(io.MultiReader(bytes.NewReader(pngData), io.LimitReader(zeros{}, hugeSize)), "stream.png", DefaultLimits())
	})
	if err != nil {
		t.Fatal(err)
	}
	wantPixels(t, "png then 2 GiB of zeros", got, want.W, want.H, want.Pix...)
	if alloc > allocBound {
		t.Errorf("Decode of a PNG followed by 2 GiB of zeros allocated %d bytes", alloc)
	}
	alloc = allocatedBy(func() {
		_, err = Decode(io.MultiReader(bytes.NewReader(junk(1<<16)), io.LimitReader(zeros{}, hugeSize)), "junk.bin", DefaultLimits())
	})
	wantErr(t, err, "junk.bin: cannot decode image")
	if alloc > allocBound {
		t.Errorf("Decode of 2 GiB of junk allocated %d bytes", alloc)
	}
}

// TestPrefixCutSaysSo: a valid image whose data lies past what its declared
// size can need is not read there; the error says the file was cut and where.
func TestPrefixCutSaysSo(t *testing.T) {
	// a 16x12 PNG whose IDAT comes after a 100 MB ancillary chunk of zeros
	data := encodePNG(t, smallImage())
	const gap = 100 << 20
	head := binary.BigEndian.AppendUint32(data[:33:33], gap)
	head = append(head, "zzZz"...)
	crc := crc32.Update(crc32.ChecksumIEEE([]byte("zzZz")), crc32.IEEETable, make([]byte, gap))
	tail := append(binary.BigEndian.AppendUint32(nil, crc), data[33:]...)
	size := int64(len(head)) + gap + int64(len(tail))
	p := sparseFile(t, "gap.png", head, size)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(tail, size-int64(len(tail))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Load(p, DefaultLimits())
	wantErr(t, err, p+": cannot decode image from its first ", "bytes (all a 16x12 png can need; the rest is not read)")
}
