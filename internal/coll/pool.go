package coll

// Pool is one reusable buffer.
type Pool struct{ B []byte }

// Get returns a buffer of n bytes with unspecified contents.
func (p *Pool) Get(n int64) []byte {
	if int64(cap(p.B)) < n {
		p.B = make([]byte, n)
	}
	return p.B[:n]
}

// AppendTo returns an empty buffer to append to, reusing the storage.
func (p *Pool) AppendTo() []byte { return p.B[:0] }

// Keep remembers a buffer grown by append.
func (p *Pool) Keep(b []byte) { p.B = b }

// Buffers are the exchange buffers of a file, kept between collective
// calls so that aggregators reuse them instead of leaving garbage behind
// (a fresh zeroed allocation per round costs as much as the copy it
// holds). The zero value is ready; a Buffers must not be used by two
// calls at once.
type Buffers struct {
	// Round holds two rounds' buffers: with overlap, one round's file
	// I/O runs while the next is exchanged.
	Round              [2]RoundBuffers
	MetaSend, MetaRecv Pool // request lists
}

// RoundBuffers are one round's data buffers.
type RoundBuffers struct {
	Send, Recv, Window, Back Pool
}
