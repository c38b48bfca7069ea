package tam

import (
	"errors"
	"io"
	"sync"

	"github.com/collio/collio/driver"
)

// memFile is an in-memory driver.File for tests. failWrites/failReads make
// every write/read fail (a broken aggregator).
type memFile struct {
	mu         sync.Mutex
	b          []byte
	failWrites bool
	failReads  bool
	// vecs counts the buffers of vectored writes.
	vecs int
}

var errInjected = errors.New("injected I/O error")

func (f *memFile) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.b...)
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failReads {
		return 0, errInjected
	}
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWrites {
		return 0, errInjected
	}
	if end := off + int64(len(p)); end > int64(len(f.b)) {
		f.b = append(f.b, make([]byte, end-int64(len(f.b)))...)
	}
	return copy(f.b[off:], p), nil
}

func (f *memFile) WriteV(bufs [][]byte, off int64) (int, error) {
	f.mu.Lock()
	f.vecs += len(bufs)
	f.mu.Unlock()
	return driver.WriteVAt(f, bufs, off)
}

func (f *memFile) ReadV(bufs [][]byte, off int64) (int, error) {
	return driver.ReadVAt(f, bufs, off)
}

func (f *memFile) Sync() error { return nil }
func (f *memFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.b = f.b[:min(int64(len(f.b)), size)]
	return nil
}
func (f *memFile) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.b)), nil
}
func (f *memFile) Allocate(off, length int64) error             { return nil }
func (f *memFile) Lock(off, length int64, exclusive bool) error { return nil }
func (f *memFile) Unlock(off, length int64) error               { return nil }
func (f *memFile) Layout() driver.Layout                        { return driver.Layout{} }
func (f *memFile) Close() error                                 { return nil }

var _ driver.File = (*memFile)(nil)
