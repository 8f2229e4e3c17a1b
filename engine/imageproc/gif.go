// This file keeps one invariant: a GIF decodes to what PIL (12.3, through
// transformers' load_image: open, exif_transpose, convert("RGB")) makes of
// its first frame. The page has the logical screen's size, grown to hold the
// frame where the frame reaches past the screen. Every pixel the frame does
// not cover has the colour of the transparency index of frame 0's graphic
// control block when it sets one, else of index 0; the header's background
// index is not used. Colours come from the frame's local table, else the
// global one; an index past the table is black; with no table, or a table
// that is the identity gray ramp (entry i is (i,i,i)), a pixel is the gray of
// its index. Bytes between blocks that start none are skipped, and so are
// zero-length sub-blocks inside the frame's data, as PIL does. Frame data
// that ends before the frame is full, and an empty frame, are errors (PIL
// calls the first truncated and refuses the second).
// Mutation that would silently break it: filling the page with the
// background index instead (or returning the frame alone, which is what
// image/gif's bounds give) changes every pixel around an offset first
// frame (TestGIFMatchesPIL, references made by PIL).
package imageproc

import (
	"bufio"
	"bytes"
	"compress/lzw"
	"errors"
	"fmt"
	"image"
	"io"
)

// gifHeader is what the blocks before frame 0's data say about it.
type gifHeader struct {
	w, h       int             // the page
	frame      image.Rectangle // frame 0, inside the page
	interlaced bool
	palette    []byte // RGB triples of the frame's table; nil: gray = index
	fill       uint8  // the index of every pixel the frame does not cover
	litWidth   int    // LZW minimum code size
	dataOff    int64  // where frame 0's first data sub-block starts
}

func isGIF(magic []byte) bool {
	return bytes.HasPrefix(magic, []byte("GIF87a")) || bytes.HasPrefix(magic, []byte("GIF89a"))
}

// gifReader reads a GIF's blocks and counts the bytes consumed.
type gifReader struct {
	r   *bufio.Reader
	pos int64
}

func (g *gifReader) byte() (byte, error) {
	b, err := g.r.ReadByte()
	if err == nil {
		g.pos++
	}
	return b, err
}

func (g *gifReader) full(n int) ([]byte, error) {
	p := make([]byte, n)
	m, err := io.ReadFull(g.r, p)
	g.pos += int64(m)
	return p, err
}

// sub reads one data sub-block; nil for the zero-length terminator.
func (g *gifReader) sub() ([]byte, error) {
	n, err := g.byte()
	if err != nil || n == 0 {
		return nil, err
	}
	return g.full(int(n))
}

// skipSubs reads sub-blocks up to and including a zero-length one.
func (g *gifReader) skipSubs() error {
	for {
		b, err := g.sub()
		if err != nil || b == nil {
			return err
		}
	}
}

// identityRamp reports a colour table whose entry i is (i,i,i): PIL then
// keeps no palette and the frame is gray by index (mode "L").
func identityRamp(p []byte) bool {
	for i := 0; i+2 < len(p); i += 3 {
		if v := byte(i / 3); p[i] != v || p[i+1] != v || p[i+2] != v {
			return false
		}
	}
	return true
}

// readGIFHeader reads the screen descriptor, the global table and the
// blocks up to frame 0's image descriptor, the way PIL's GifImageFile._seek(0)
// does, so that the size checked against Limits is the page PIL would make.
func readGIFHeader(r io.Reader) (*gifHeader, error) {
	g := &gifReader{r: bufio.NewReader(r)}
	h, err := g.full(13)
	if err != nil {
		return nil, fmt.Errorf("gif: reading the screen descriptor: %w", err)
	}
	screenW, screenH := int(h[6])|int(h[7])<<8, int(h[8])|int(h[9])<<8
	var global []byte
	if h[10]&0x80 != 0 {
		p, err := g.full(3 << (h[10]&7 + 1))
		if err != nil {
			return nil, fmt.Errorf("gif: reading the global colour table: %w", err)
		}
		if !identityRamp(p) {
			global = p
		}
	}
	trns := -1
	for {
		b, err := g.byte()
		if err != nil {
			return nil, fmt.Errorf("gif: no image before the end of the data: %w", err)
		}
		if b == ';' {
			return nil, errors.New("gif: the trailer comes before any image")
		}
		switch b {
		case '!':
			if trns, err = g.extension(trns); err != nil {
				return nil, err
			}
		case ',':
			return g.imageDescriptor(screenW, screenH, global, trns)
		default: // PIL skips a byte that starts no block
		}
	}
}

// extension reads one extension block after its '!' and returns the
// transparency index in force after it (-1: none).
func (g *gifReader) extension(trns int) (int, error) {
	label, err := g.byte()
	if err != nil {
		return 0, fmt.Errorf("gif: reading an extension: %w", err)
	}
	block, err := g.sub()
	if err != nil {
		return 0, fmt.Errorf("gif: reading an extension: %w", err)
	}
	switch {
	case label == 0xFE: // comment: its sub-blocks up to the terminator
		if block == nil {
			return trns, nil
		}
	case label == 0xF9 && block != nil: // graphic control
		if len(block) < 3 || block[0]&1 != 0 && len(block) < 4 {
			return 0, fmt.Errorf("gif: graphic control block of %d bytes", len(block))
		}
		if block[0]&1 != 0 {
			trns = int(block[3]) // a later block without the flag keeps it, as in PIL
		}
	case label == 0xFF && bytes.HasPrefix(block, []byte("NETSCAPE2.0")):
		if _, err := g.sub(); err != nil { // PIL reads the loop count block
			return 0, fmt.Errorf("gif: reading an extension: %w", err)
		}
	}
	// after a terminator already read (an empty first block), this reads on
	// into what follows, as PIL does
	if err := g.skipSubs(); err != nil {
		return 0, fmt.Errorf("gif: reading an extension: %w", err)
	}
	return trns, nil
}

func (g *gifReader) imageDescriptor(screenW, screenH int, global []byte, trns int) (*gifHeader, error) {
	d, err := g.full(9)
	if err != nil {
		return nil, fmt.Errorf("gif: reading the image descriptor: %w", err)
	}
	x0, y0 := int(d[0])|int(d[1])<<8, int(d[2])|int(d[3])<<8
	fw, fh := int(d[4])|int(d[5])<<8, int(d[6])|int(d[7])<<8
	hd := &gifHeader{
		w: max(screenW, x0+fw), h: max(screenH, y0+fh),
		frame:      image.Rect(x0, y0, x0+fw, y0+fh),
		interlaced: d[8]&0x40 != 0,
		palette:    global,
	}
	if d[8]&0x80 != 0 {
		p, err := g.full(3 << (d[8]&7 + 1))
		if err != nil {
			return nil, fmt.Errorf("gif: reading the local colour table: %w", err)
		}
		hd.palette = p
		if identityRamp(p) {
			hd.palette = nil
		}
	}
	if trns >= 0 {
		hd.fill = uint8(trns)
	}
	lw, err := g.byte()
	if err != nil {
		return nil, fmt.Errorf("gif: reading the image data: %w", err)
	}
	hd.litWidth, hd.dataOff = int(lw), g.pos
	return hd, nil
}

// gifData reads the bytes of a frame's data sub-blocks. Like PIL's decoder
// it takes a zero length as an empty block and reads the next length after
// it; it stops at the end of its input.
type gifData struct {
	r    *bufio.Reader
	left int
}

func (d *gifData) ReadByte() (byte, error) {
	for d.left == 0 {
		n, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		d.left = int(n)
	}
	b, err := d.r.ReadByte()
	if err == nil {
		d.left--
	}
	return b, err
}

func (d *gifData) Read(p []byte) (int, error) {
	for i := range p {
		b, err := d.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}

// decodeGIF decodes frame 0's data (r starts at hd.dataOff) onto the page.
func decodeGIF(r io.Reader, hd *gifHeader) (*RGB, error) {
	fw, fh := hd.frame.Dx(), hd.frame.Dy()
	if fw == 0 || fh == 0 {
		return nil, fmt.Errorf("gif: frame 0 is %dx%d pixels", fw, fh)
	}
	if hd.litWidth < 2 || hd.litWidth > 8 {
		return nil, fmt.Errorf("gif: LZW code size %d is not supported", hd.litWidth)
	}
	idx := make([]byte, fw*fh)
	lz := lzw.NewReader(&gifData{r: bufio.NewReader(r)}, lzw.LSB, hd.litWidth)
	defer lz.Close()
	for n := 0; n < len(idx); {
		m, err := lz.Read(idx[n:])
		n += m
		switch {
		case n == len(idx):
		case err == io.EOF: // the end code
			return nil, fmt.Errorf("gif: frame 0's data has its end code after %d of its %d pixels", n, len(idx))
		case err != nil: // io.ErrUnexpectedEOF when the data runs out
			return nil, fmt.Errorf("gif: frame 0's data, after %d of its %d pixels: %w", n, len(idx), err)
		}
	}
	var lut [256][3]uint8 // entries past the table stay black, as in PIL
	for i := range lut {
		if hd.palette == nil {
			lut[i] = [3]uint8{uint8(i), uint8(i), uint8(i)}
		} else if 3*i+2 < len(hd.palette) {
			lut[i] = [3]uint8{hd.palette[3*i], hd.palette[3*i+1], hd.palette[3*i+2]}
		}
	}
	out := &RGB{W: hd.w, H: hd.h, Pix: make([]uint8, hd.w*hd.h*3)}
	bg := lut[hd.fill]
	for i := 0; i < len(out.Pix); i += 3 {
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = bg[0], bg[1], bg[2]
	}
	for k, y := range gifRows(fh, hd.interlaced) {
		dst := out.Pix[((hd.frame.Min.Y+y)*hd.w+hd.frame.Min.X)*3:]
		for i, v := range idx[k*fw : (k+1)*fw] {
			c := lut[v]
			dst[3*i], dst[3*i+1], dst[3*i+2] = c[0], c[1], c[2]
		}
	}
	return out, nil
}

// gifRows gives, for each row as stored, its row in the frame: in order, or
// the four interlace passes (every 8th row from 0, every 8th from 4, every
// 4th from 2, every 2nd from 1).
func gifRows(h int, interlaced bool) []int {
	rows := make([]int, 0, h)
	if !interlaced {
		for y := range h {
			rows = append(rows, y)
		}
		return rows
	}
	for _, p := range [4][2]int{{0, 8}, {4, 8}, {2, 4}, {1, 2}} {
		for y := p[0]; y < h; y += p[1] {
			rows = append(rows, y)
		}
	}
	return rows
}
