package coll

import (
	"sync"

	"golang.org/x/sys/unix"
)

// mappings keeps the buffers that off-heap pools released (a file's at
// Close) for the next pool to map: programs such as E3SM's write file
// after file, and a fresh mapping costs a page fault per page on first
// touch. What is kept stays resident, as a garbage-collected heap keeps
// what it grew to; a miss gives back a kept mapping too small to serve it,
// so the resident total does not grow from file to file.
var mappings keptMappings

type keptMappings struct {
	sync.Mutex
	free  [][]byte
	bytes int64
}

// keepMax bounds the bytes mappings keeps.
const keepMax = 256 << 20

// mapBuffer returns a mapping of size bytes (a multiple of the page
// size): a kept one of at most twice that, or a new one.
func mapBuffer(size int64) ([]byte, error) {
	m := &mappings
	m.Lock()
	fit, small := -1, -1
	for i, b := range m.free {
		n := int64(len(b))
		switch {
		case n >= size && n <= 2*size && (fit < 0 || n < int64(len(m.free[fit]))):
			fit = i
		case n < size && (small < 0 || n > int64(len(m.free[small]))):
			small = i
		}
	}
	var drop []byte
	if fit < 0 && small >= 0 {
		drop = m.take(small)
	}
	var b []byte
	if fit >= 0 {
		b = m.take(fit)
	}
	m.Unlock()
	if drop != nil {
		unmapBufferNow(drop)
	}
	if b != nil {
		return b[:size], nil
	}
	return unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// take removes the i-th kept mapping and returns it whole. Caller holds
// the lock.
func (m *keptMappings) take(i int) []byte {
	b := m.free[i]
	m.free[i] = m.free[len(m.free)-1]
	m.free = m.free[:len(m.free)-1]
	m.bytes -= int64(cap(b))
	return b[:cap(b)]
}

// unmapBuffer keeps b for a later mapBuffer, or unmaps it when that would
// keep more than keepMax. No slice of b may be used afterwards.
func unmapBuffer(b []byte) {
	m := &mappings
	b = b[:cap(b)]
	m.Lock()
	if m.bytes+int64(len(b)) <= keepMax {
		m.free = append(m.free, b)
		m.bytes += int64(len(b))
		m.Unlock()
		return
	}
	m.Unlock()
	unmapBufferNow(b)
}

func unmapBufferNow(b []byte) {
	_ = unix.Munmap(b[:cap(b)]) // only fails for a bad address: not ours
}
