package coll

import "unsafe"

// Pool is one reusable buffer. The pools of Buffers set OffHeap keep
// large buffers outside the Go heap until Release.
type Pool struct {
	B []byte
	// mapped is B's storage when B was mapped (see Buffers.OffHeap).
	mapped  []byte
	offHeap bool
}

// mapMin is the smallest buffer an off-heap pool maps; mapped buffers
// are rounded up to a multiple of it.
const mapMin = 1 << 20

// Get returns a buffer of n bytes with unspecified contents.
func (p *Pool) Get(n int64) []byte {
	if int64(cap(p.B)) < n {
		p.Release()
		p.B = p.alloc(n)
	}
	return p.B[:n]
}

// alloc makes a buffer of at least n bytes: mapped when the pool is
// off-heap and n is large, else from the Go heap (also when the mapping
// fails: memory is then as scarce either way).
func (p *Pool) alloc(n int64) []byte {
	if p.offHeap && n >= mapMin {
		size := (n + mapMin - 1) / mapMin * mapMin
		if b, err := mapBuffer(size); err == nil {
			p.mapped = b
			return b
		}
	}
	return make([]byte, n)
}

// AppendTo returns an empty buffer to append to, reusing the storage.
func (p *Pool) AppendTo() []byte { return p.B[:0] }

// Keep remembers a buffer grown by append.
func (p *Pool) Keep(b []byte) {
	if cap(b) > 0 && cap(p.B) > 0 && unsafe.SliceData(b[:1]) == unsafe.SliceData(p.B[:1]) {
		p.B = b // the same storage
		return
	}
	p.Release()
	p.B = b
}

// Release gives the buffer back: a mapped one goes to the next pool that
// maps one (or is unmapped), so no slice of it may be used afterwards.
func (p *Pool) Release() {
	if p.mapped != nil {
		unmapBuffer(p.mapped)
		p.mapped = nil
	}
	p.B = nil
}

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

// OffHeap makes b keep its large buffers outside the Go heap, for an
// owner that calls Release once no call uses them. Large exchange
// buffers on the heap raise the garbage collector's goal by their size
// (and so the garbage a process may hold at its peak), and a reused heap
// span is cleared before use; a mapping is neither.
func (b *Buffers) OffHeap() {
	for _, p := range b.pools() {
		p.offHeap = true
	}
}

// Release gives every buffer back (Pool.Release); b stays usable.
func (b *Buffers) Release() {
	for _, p := range b.pools() {
		p.Release()
	}
}

func (b *Buffers) pools() [10]*Pool {
	r0, r1 := &b.Round[0], &b.Round[1]
	return [10]*Pool{&b.MetaSend, &b.MetaRecv, &r0.Send, &r0.Recv, &r0.Window, &r0.Back,
		&r1.Send, &r1.Recv, &r1.Window, &r1.Back}
}
