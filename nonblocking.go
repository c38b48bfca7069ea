package collio

import "github.com/collio/collio/adio"

// Request is a nonblocking collective transfer in progress (IWriteAtAll,
// IReadAtAll, IWriteAll, IReadAll). The transfer progresses on its own
// while the program computes; Wait or Test completes it. Its buffer must
// not change (writes) or be read (reads) before then.
//
// Every rank starts its nonblocking collective transfers on a file in the
// same order, as for blocking ones; they may complete, and be waited for,
// in any order. Up to four progress at once per file; more wait their
// turn. Background progress needs MPI_THREAD_MULTIPLE (collio asks for it
// when it initialises MPI); with a lower level, each transfer runs inside
// its start call.
type Request = adio.Request

// WaitAll waits for every request and returns the first error, in the
// order given.
func WaitAll(reqs ...*Request) error { return adio.WaitAll(reqs...) }

// WaitAny waits for one of the requests not completed yet and returns its
// index and outcome; index -1 when none is left.
func WaitAny(reqs ...*Request) (index int, n int64, err error) { return adio.WaitAny(reqs...) }

// IWriteAtAll starts writing p at offset off (etypes) collectively.
func (f *File) IWriteAtAll(p []byte, off int64) (*Request, error) {
	return f.f.IWriteAtAll(adio.Bytes(p), off)
}

// IReadAtAll starts reading len(p) bytes at offset off collectively. Wait
// returns the bytes read: fewer only at end of file.
func (f *File) IReadAtAll(p []byte, off int64) (*Request, error) {
	return f.f.IReadAtAll(adio.Bytes(p), off)
}

// IWriteAll starts writing p at the individual file pointer collectively;
// the pointer moves past p at once.
func (f *File) IWriteAll(p []byte) (*Request, error) { return f.f.IWriteAll(adio.Bytes(p)) }

// IReadAll starts reading into p from the individual file pointer
// collectively; the pointer moves past len(p) bytes at once.
func (f *File) IReadAll(p []byte) (*Request, error) { return f.f.IReadAll(adio.Bytes(p)) }

// IWriteAtAllBuffer is IWriteAtAll for a noncontiguous buffer.
func (f *File) IWriteAtAllBuffer(b Buffer, off int64) (*Request, error) {
	return f.f.IWriteAtAll(b, off)
}

// IReadAtAllBuffer is IReadAtAll for a noncontiguous buffer.
func (f *File) IReadAtAllBuffer(b Buffer, off int64) (*Request, error) {
	return f.f.IReadAtAll(b, off)
}
