package ioserver

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestCompactorMergesAdjacentAndOverlapping(t *testing.T) {
	var c Compactor
	c.Add(0, []byte("aaaa"))
	c.Add(8, []byte("cccc"))
	require.Equal(t, 2, c.Len())
	c.Add(4, []byte("bbbb")) // touches both: one run
	require.Equal(t, 1, c.Len())
	require.Equal(t, []Run{{0, []byte("aaaabbbbcccc")}}, c.Runs())
	c.Add(2, []byte("XXXX")) // morphs 4 queued bytes
	require.Equal(t, "aaXXXXbbcccc", string(c.Runs()[0].Data))
	s := c.Stats()
	require.Equal(t, Stats{Requests: 4, Merged: 2, Morphed: 4}, s)
	require.Equal(t, int64(12), c.Bytes())
}

func TestCompactorMorphsWholeRunsAway(t *testing.T) {
	var c Compactor
	c.Add(10, []byte("old"))
	c.Add(20, []byte("old"))
	c.Add(5, bytes.Repeat([]byte("n"), 30))
	require.Equal(t, []Run{{5, bytes.Repeat([]byte("n"), 30)}}, c.Runs())
	require.Equal(t, int64(6), c.Stats().Morphed)
	require.Equal(t, int64(30), c.Bytes())
}

func TestCompactorStealPartly(t *testing.T) {
	var c Compactor
	c.Add(4, []byte("abcd"))
	c.Add(12, []byte("ef"))
	p := make([]byte, 12)
	gaps := c.Steal(2, p)
	require.Equal(t, []Range{{2, 4}, {8, 12}}, gaps)
	require.Equal(t, "\x00\x00abcd\x00\x00\x00\x00ef", string(p))
	require.Equal(t, int64(1), c.Stats().Stolen)
	require.Equal(t, int64(6), c.Stats().StoleB)
	gaps = c.Steal(100, make([]byte, 4))
	require.Equal(t, []Range{{100, 104}}, gaps)
	require.Equal(t, int64(1), c.Stats().Stolen, "a read the queue does not touch is not stolen")
}

func TestCompactorCoveredAndTake(t *testing.T) {
	var c Compactor
	require.Equal(t, int64(3), c.Covered(3, 9))
	c.Add(4, []byte("ab"))
	require.Equal(t, int64(6), c.Covered(0, 9))
	require.Equal(t, int64(5), c.Covered(0, 5))
	require.Equal(t, int64(7), c.Covered(7, 9))
	require.Equal(t, int64(6), c.End())
	runs := c.Take()
	require.Len(t, runs, 1)
	require.Zero(t, c.Bytes())
	require.Zero(t, c.Len())
}

// oracle is the file as a byte array with a mask of written bytes: last
// write wins.
type oracle struct {
	data    []byte
	written []bool
}

func (o *oracle) write(off int64, p []byte) {
	for int64(len(o.data)) < off+int64(len(p)) {
		o.data = append(o.data, 0)
		o.written = append(o.written, false)
	}
	copy(o.data[off:], p)
	for i := range p {
		o.written[off+int64(i)] = true
	}
}

// TestCompactorMatchesOracle adds random writes, steals random reads and
// sometimes takes everything (writing it to a "file"): the file plus the
// queue always equals the oracle, runs stay sorted and apart, and the
// byte count and morph count add up.
func TestCompactorMatchesOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c Compactor
		var want, file oracle
		var added int64
		written := int64(0)
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			off := int64(rapid.IntRange(0, 200).Draw(t, "off"))
			n := rapid.IntRange(0, 40).Draw(t, "n")
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1, 2:
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rapid.IntRange(1, 255).Draw(t, "b"))
				}
				c.Add(off, p)
				want.write(off, p)
				added += int64(n)
			case 3, 4:
				p := make([]byte, n)
				gaps := c.Steal(off, p)
				// Fill the gaps from the file, as the server does.
				for _, g := range gaps {
					for o := g.Start; o < g.End; o++ {
						if o < int64(len(file.data)) {
							p[o-off] = file.data[o]
						}
					}
				}
				for i := range p {
					o := off + int64(i)
					var w byte
					if o < int64(len(want.data)) {
						w = want.data[o]
					}
					if p[i] != w {
						t.Fatalf("read at %d: got %d want %d", o, p[i], w)
					}
				}
			case 5:
				for _, r := range c.Take() {
					file.write(r.Off, r.Data)
					written += int64(len(r.Data))
				}
			}
			var sum int64
			for i, r := range c.Runs() {
				sum += int64(len(r.Data))
				if len(r.Data) == 0 || (i > 0 && c.Runs()[i-1].End() >= r.Off) {
					t.Fatalf("runs not sorted and apart: %v", c.Runs())
				}
			}
			if sum != c.Bytes() {
				t.Fatalf("Bytes %d, runs hold %d", c.Bytes(), sum)
			}
			// Every byte added is queued, written, or morphed away.
			if added != c.Bytes()+written+c.Stats().Morphed {
				t.Fatalf("added %d != queued %d + written %d + morphed %d", added, c.Bytes(), written, c.Stats().Morphed)
			}
		}
		for _, r := range c.Take() {
			file.write(r.Off, r.Data)
		}
		n := len(want.data)
		got := make([]byte, n)
		copy(got, file.data)
		if !bytes.Equal(got, want.data) {
			t.Fatalf("file after draining differs from the oracle")
		}
	})
}
