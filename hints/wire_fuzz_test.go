package hints

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// FuzzDecodeStrings: the string list of CheckSame's messages never panics,
// reads past its input or decodes more strings than allowed, and what it
// accepts survives a round trip.
// Seeds: testdata/fuzz/FuzzDecodeStrings.
func FuzzDecodeStrings(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, ok := decodeStrings(b, 64)
		if !ok {
			return
		}
		if len(ss) > 64 {
			t.Fatalf("%d strings, more than the 64 allowed", len(ss))
		}
		n := 0
		for _, s := range ss {
			n += len(s)
		}
		if n > len(b) {
			t.Fatalf("%d bytes of strings from %d bytes", n, len(b))
		}
		again, ok := decodeStrings(encodeStrings(ss), len(ss))
		if !ok || !slices.Equal(again, ss) {
			t.Fatalf("round trip: %q -> %q, %v", ss, again, ok)
		}
	})
}

// FuzzCheckSameWire runs CheckSame on one rank of a job whose other ranks
// send arbitrary bytes: rank 0's broadcast (length and pairs), the others'
// bitmaps and their differing values with their lengths. Whatever arrives,
// CheckSame returns nil, an ErrNotSame error or an ErrInternComm error,
// without panicking or allocating what a length claims before checking it.
// Seeds: testdata/fuzz/FuzzCheckSameWire.
func FuzzCheckSameWire(f *testing.F) {
	f.Fuzz(func(t *testing.T, size, rank uint8, wire []byte) {
		c := &wireComm{size: 2 + int(size%4), wire: wire}
		c.rank = 1 + int(rank)%(c.size-1)
		s, err := Resolve(map[string]string{CBBufferSize: "8m"}, Options{Getenv: envWith("")})
		if err != nil {
			t.Fatal(err)
		}
		err = CheckSame(c, s)
		if c.allocated > 2*maxWireBytes+1<<10 {
			t.Fatalf("%d bytes handed to the communicator", c.allocated)
		}
		if cl := ioerr.ClassOf(err); err != nil && cl != ioerr.ErrNotSame && cl != ioerr.ErrInternComm {
			t.Fatalf("error of class %v: %v", cl, err)
		}
	})
}

// wireComm is one rank of a job whose other ranks' contributions are read
// from wire (zeros once it is used up). It checks its arguments as MPI
// would.
type wireComm struct {
	comm.Comm // nil: CheckSame calls only the methods below
	rank      int
	size      int
	wire      []byte
	allocated int
}

var errWireArgs = errors.New("wire comm: bad arguments")

func (c *wireComm) Rank() int { return c.rank }
func (c *wireComm) Size() int { return c.size }

// fill copies the next len(b) bytes of the wire into b.
func (c *wireComm) fill(b []byte) {
	n := copy(b, c.wire)
	c.wire = c.wire[n:]
	clear(b[n:])
}

func (c *wireComm) Bcast(buf []byte, root int) error {
	if root != 0 {
		return errWireArgs
	}
	c.allocated += len(buf)
	c.fill(buf)
	return nil
}

func (c *wireComm) Allgather(send, recv []byte) error {
	if len(recv) != c.size*len(send) {
		return errWireArgs
	}
	c.allocated += len(recv)
	for r := range c.size {
		part := recv[r*len(send) : (r+1)*len(send)]
		if r == c.rank {
			copy(part, send)
		} else {
			c.fill(part)
		}
	}
	return nil
}

func (c *wireComm) Allgatherv(send, recv []byte, counts, displs []int) error {
	if len(counts) != c.size || len(displs) != c.size || counts[c.rank] != len(send) {
		return errWireArgs
	}
	c.allocated += len(recv)
	for r := range c.size {
		if counts[r] < 0 || displs[r] < 0 || displs[r] > len(recv)-counts[r] {
			return errWireArgs
		}
		part := recv[displs[r] : displs[r]+counts[r]]
		if r == c.rank {
			copy(part, send)
		} else {
			c.fill(part)
		}
	}
	return nil
}

// wireMessage lays out what the other ranks send in FuzzCheckSameWire,
// for seeds: rank 0's pairs, then one bitmap per other rank, then the
// other ranks' value lengths and values.
func wireMessage(pairs []string, bitmaps [][]byte, values [][]string) []byte {
	enc := encodeStrings(pairs)
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(enc)))
	b = append(b, enc...)
	for _, m := range bitmaps {
		b = append(b, m...)
	}
	for _, v := range values {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(encodeStrings(v))))
	}
	for _, v := range values {
		b = append(b, encodeStrings(v)...)
	}
	return b
}

// A rank that announces 2^60 bytes of differing values, or a negative
// count, gets an error on every rank instead of an allocation or a panic.
func TestCheckSameRefusesHugeLengths(t *testing.T) {
	s, err := Resolve(nil, Options{Getenv: envWith("")})
	if err != nil {
		t.Fatal(err)
	}
	pairs := s.agreePairs()
	pairs[1] += "x" // rank 1 (us) differs on the first key
	for _, n := range []uint64{1 << 60, 1<<64 - 1, maxWireBytes + 1} {
		enc := encodeStrings(pairs)
		wire := binary.LittleEndian.AppendUint64(nil, uint64(len(enc)))
		wire = append(wire, enc...)
		wire = append(wire, make([]byte, (len(pairs)/2+7)/8)...) // rank 0's bitmap: no difference
		wire = binary.LittleEndian.AppendUint64(wire, n)         // rank 0's value bytes
		c := &wireComm{rank: 1, size: 2, wire: wire}
		err := CheckSame(c, s)
		if ioerr.ClassOf(err) != ioerr.ErrInternComm || !strings.Contains(err.Error(), fmt.Sprintf("rank 0's differing hint values are %d bytes", n)) {
			t.Errorf("%d bytes announced: %v", n, err)
		}
		if c.allocated > 1<<20 {
			t.Errorf("%d bytes announced: %d bytes allocated", n, c.allocated)
		}
	}
	// 16 MiB of empty strings: refused before comparing millions of keys.
	wire := binary.LittleEndian.AppendUint64(nil, maxWireBytes)
	if err := CheckSame(&wireComm{rank: 1, size: 2, wire: wire}, s); ioerr.ClassOf(err) != ioerr.ErrInternComm ||
		!strings.Contains(err.Error(), "not a list of at most 1024 key-value pairs") {
		t.Errorf("broadcast of 16 Mi empty strings: %v", err)
	}
	wire = binary.LittleEndian.AppendUint64(nil, 1<<60)
	if err := CheckSame(&wireComm{rank: 1, size: 2, wire: wire}, s); ioerr.ClassOf(err) != ioerr.ErrInternComm ||
		!strings.Contains(err.Error(), "hint broadcast of 1152921504606846976 bytes is implausible") {
		t.Errorf("broadcast of 2^60 bytes: %v", err)
	}
}

// FuzzParseHintsFile: ROMIO_HINTS files of any content give lines with a
// key and a value and problems naming the line, never a panic.
// Seeds: testdata/fuzz/FuzzParseHintsFile.
func FuzzParseHintsFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data string) {
		lines, problems := parseHintsFile("hints", []byte(data))
		nlines := strings.Count(data, "\n") + 1
		last := 0
		for _, l := range lines {
			if l.line <= last || l.line > nlines {
				t.Fatalf("line number %d after %d (of %d)", l.line, last, nlines)
			}
			last = l.line
			if l.key == "" || l.value == "" || strings.ContainsAny(l.key, " \t\n") ||
				strings.TrimSpace(l.value) != l.value || strings.HasPrefix(l.key, "#") {
				t.Fatalf("line %d: key %q value %q", l.line, l.key, l.value)
			}
		}
		for _, p := range problems {
			if !strings.HasPrefix(p, "hints line ") || !strings.Contains(p, "has no value") {
				t.Fatalf("problem %q", p)
			}
		}
	})
}
