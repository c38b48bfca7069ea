package ioserver

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Session is a compute rank's connection to the servers: the server
// communicator (compute and server ranks together) and which ranks serve.
type Session struct {
	c       comm.Comm
	servers []int        // ranks in c, by server index
	mu      []sync.Mutex // one exchange with a server at a time
}

// NewSession connects a compute rank to the given server ranks of c.
func NewSession(c comm.Comm, servers []int) *Session {
	return &Session{c: c, servers: servers, mu: make([]sync.Mutex, len(servers))}
}

// Servers is the number of servers.
func (s *Session) Servers() int { return len(s.servers) }

// call sends a request to server i and returns its answer; data, when
// given, receives the bytes after the answer's header.
func (s *Session) call(i int, r request, payload []byte, room int) (reply, []byte, error) {
	s.mu[i].Lock()
	defer s.mu[i].Unlock()
	return s.callLocked(i, r, payload, room)
}

func (s *Session) callLocked(i int, r request, payload []byte, room int) (reply, []byte, error) {
	r.Src = int32(s.c.Rank())
	dst := s.servers[i]
	buf := make([]byte, replyLen+maxErrText+room)
	rreq, err := s.c.Irecv(buf, dst, tagReply)
	if err != nil {
		return reply{}, nil, err
	}
	sreq, err := s.c.Isend(r.encode(payload), dst, tagCtrl)
	if err != nil {
		rreq.Wait()
		return reply{}, nil, err
	}
	if err := comm.Waitall(sreq, rreq); err != nil {
		return reply{}, nil, fmt.Errorf("ioserver: %v request to server %d (rank %d): %w", r.Kind, i, dst, err)
	}
	return decodeReply(buf[:rreq.Count()])
}

// chunk is bytes of the caller's to write at a file offset.
type chunk struct {
	off int64
	b   []byte
}

// write hands chunks to server i in one request: credit, then bytes,
// until all are sent. When it returns the server has them (or is
// receiving them into memory it reserved) and the chunks' buffers may be
// reused.
func (s *Session) write(i int, handle uint64, chunks []chunk) error {
	var ext []Extent
	total := int64(0)
	for _, c := range chunks {
		n := int64(len(c.b))
		if k := len(ext) - 1; k >= 0 && ext[k].Off+ext[k].N == c.off {
			ext[k].N += n
		} else {
			ext = append(ext, Extent{Off: c.off, N: n})
		}
		total += n
	}
	if total == 0 {
		return nil
	}
	s.mu[i].Lock()
	defer s.mu[i].Unlock()
	dst := s.servers[i]
	buf := make([]byte, replyLen+maxErrText)
	r := request{Kind: kWrite, Src: int32(s.c.Rank()), Handle: handle, N: total}
	sreq, err := s.c.Isend(r.encode(encodeExtents(ext)), dst, tagCtrl)
	if err != nil {
		return err
	}
	if err := sreq.Wait(); err != nil {
		return err
	}
	st := stream{chunks: chunks}
	for pos := int64(0); pos < total; {
		rreq, err := s.c.Irecv(buf, dst, tagReply)
		if err != nil {
			return err
		}
		if err := rreq.Wait(); err != nil {
			return fmt.Errorf("ioserver: waiting for credit from server %d (rank %d): %w", i, dst, err)
		}
		rep, _, err := decodeReply(buf[:rreq.Count()])
		if err != nil {
			return err
		}
		if err := rep.err(); err != nil {
			return err
		}
		g := rep.V[0]
		if g <= 0 || g > total-pos {
			return fmt.Errorf("ioserver: server %d granted %d bytes for %d", i, g, total-pos)
		}
		dreq, err := s.c.Isend(st.next(g), dst, tagData)
		if err != nil {
			return err
		}
		if err := dreq.Wait(); err != nil {
			return err
		}
		pos += g
	}
	return nil
}

// stream reads chunks' bytes in order: in place when one chunk holds
// what is asked, else gathered into a new buffer.
type stream struct {
	chunks []chunk
	ci     int
	co     int
}

func (st *stream) next(n int64) []byte {
	if c := st.chunks[st.ci].b[st.co:]; int64(len(c)) >= n {
		st.advance(int(n))
		return c[:n]
	}
	out := make([]byte, 0, n)
	for int64(len(out)) < n {
		c := st.chunks[st.ci].b[st.co:]
		k := min(len(c), int(n)-len(out))
		out = append(out, c[:k]...)
		st.advance(k)
	}
	return out
}

func (st *stream) advance(k int) {
	st.co += k
	for st.ci < len(st.chunks) && st.co == len(st.chunks[st.ci].b) {
		st.ci, st.co = st.ci+1, 0
	}
}

// Stop asks every server to stop once its work is done and returns the
// first error of the files the servers still had open. Call it on one
// compute rank, after every compute rank is done with the servers.
func (s *Session) Stop() error {
	var first error
	for i := range s.servers {
		rep, _, err := s.call(i, request{Kind: kStop}, nil, 0)
		if err == nil {
			err = rep.err()
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stats sums the Compactor counts of every server.
func (s *Session) Stats() (Stats, error) {
	var st Stats
	for i := range s.servers {
		rep, _, err := s.call(i, request{Kind: kStats}, nil, 0)
		if err != nil {
			return st, err
		}
		st.Merged += rep.V[0]
		st.Morphed += rep.V[1]
		st.Stolen += rep.V[2]
	}
	return st, nil
}

// Driver is a driver.Driver whose files live on the servers: opening asks
// every server to open the file with the real driver, and the file's
// writes and reads go to the server of each byte's block.
type Driver struct {
	s     *Session
	inner driver.Driver
}

// NewDriver wraps inner so that its files are reached through s.
func NewDriver(s *Session, inner driver.Driver) *Driver { return &Driver{s: s, inner: inner} }

// Name is the real driver's name.
func (d *Driver) Name() string { return d.inner.Name() }

// Delete deletes the file directly: no server holds it open then.
func (d *Driver) Delete(path string) error { return d.inner.Delete(path) }

// Open opens path on every server. Creation happens on server 0 first,
// so exclusive creation means what it says; the others then open the
// file it made.
func (d *Driver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	a := openArgs{Driver: d.inner.Name(), Path: path, Flags: opts.Flags, Perm: opts.Perm, Layout: opts.Layout, Params: opts.Params}
	f := &File{s: d.s, handles: make([]uint64, len(d.s.servers))}
	for i := range d.s.servers {
		if i == 1 {
			a.Flags &^= driver.OCreate | driver.OExcl
		}
		rep, _, err := d.s.call(i, request{Kind: kOpen}, a.encode(), 0)
		if err == nil {
			err = rep.err()
		}
		if err != nil {
			f.closeFirst(i)
			return nil, err
		}
		f.handles[i] = uint64(rep.V[0])
		if i == 0 {
			f.layout = driver.Layout{StripeSize: rep.V[1], StripeCount: int(rep.V[2]), StartTarget: -1}
		}
	}
	f.unit = Unit(f.layout.StripeSize)
	return f, nil
}

// File is a file open on the servers.
type File struct {
	s       *Session
	handles []uint64 // per server
	layout  driver.Layout
	unit    int64
}

var _ driver.File = (*File)(nil)

func (f *File) closeFirst(n int) {
	for i := range n {
		f.s.call(i, request{Kind: kClose, Handle: f.handles[i]}, nil, 0)
	}
}

// WriteAt hands p to the servers of its blocks; it returns once they
// have it. Write errors come back from Sync and Close.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, ioerr.New(ioerr.ErrArg, "write", "negative offset %d", off)
	}
	n, err := f.WriteRuns([]driver.Run{{Off: off, Bufs: [][]byte{p}}})
	return int(n), err
}

// WriteRuns hands every run to the servers of its blocks, one request per
// server (driver.RunWriter): a noncontiguous view's many small runs cost
// a round trip per server, not one per run.
func (f *File) WriteRuns(runs []driver.Run) (int64, error) {
	perServer, order, err := f.chunks(runs)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, i := range order {
		chunks := perServer[i]
		for len(chunks) > 0 {
			k := min(len(chunks), maxExtents)
			if err := f.s.write(i, f.handles[i], chunks[:k]); err != nil {
				return total, err
			}
			for _, c := range chunks[:k] {
				total += int64(len(c.b))
			}
			chunks = chunks[k:]
		}
	}
	return total, nil
}

// ReadAt reads from the servers, which serve queued bytes from their
// queues and the rest from the file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, ioerr.New(ioerr.ErrArg, "read", "negative offset %d", off)
	}
	end := int64(0) // end of the bytes that exist
	for _, pc := range Pieces(off, int64(len(p)), f.unit, len(f.handles)) {
		for pos := int64(0); pos < pc.Len; {
			n := min(pc.Len-pos, maxPiece)
			rep, data, err := f.s.call(pc.Server, request{Kind: kRead, Handle: f.handles[pc.Server], Off: pc.Off + pos, N: n}, nil, int(n))
			if err == nil {
				err = rep.err()
			}
			if err != nil {
				return int(pc.Pos + pos), err
			}
			got := rep.V[0]
			dst := p[pc.Pos+pos : pc.Pos+pos+n]
			copy(dst, data[:got])
			clear(dst[got:])
			if got > 0 {
				end = pc.Pos + pos + got
			}
			pos += n
		}
	}
	if end < int64(len(p)) {
		return int(end), io.EOF
	}
	return len(p), nil
}

// ReadRuns fills every run from the servers of its blocks, one request
// per server for up to maxPiece bytes (driver.RunReader), and returns how
// many bytes exist; bytes past end of file read as zeros.
func (f *File) ReadRuns(runs []driver.Run) (int64, error) {
	perServer, order, err := f.chunks(runs)
	if err != nil {
		return 0, err
	}
	var got int64
	for _, i := range order {
		chunks := perServer[i]
		for len(chunks) > 0 {
			k, total := 0, int64(0)
			for k < len(chunks) && k < maxExtents && total+int64(len(chunks[k].b)) <= maxPiece {
				total += int64(len(chunks[k].b))
				k++
			}
			if k == 0 { // one chunk larger than a reply: read it alone
				n, err := f.ReadAt(chunks[0].b, chunks[0].off)
				got += int64(n)
				if err != nil && !errors.Is(err, io.EOF) {
					return got, err
				}
				chunks = chunks[1:]
				continue
			}
			ext := make([]Extent, k)
			for j, c := range chunks[:k] {
				ext[j] = Extent{Off: c.off, N: int64(len(c.b))}
			}
			rep, data, err := f.s.call(i, request{Kind: kReadV, Handle: f.handles[i], N: total}, encodeExtents(ext), int(total))
			if err == nil {
				err = rep.err()
			}
			if err == nil && int64(len(data)) != total {
				err = fmt.Errorf("ioserver: server %d answered a read of %d bytes with %d", i, total, len(data))
			}
			if err != nil {
				return got, err
			}
			for _, c := range chunks[:k] {
				data = data[copy(c.b, data):]
			}
			got += rep.V[0]
			chunks = chunks[k:]
		}
	}
	return got, nil
}

// chunks cuts runs at block edges into each server's chunks, and lists
// the servers in order of first use.
func (f *File) chunks(runs []driver.Run) ([][]chunk, []int, error) {
	perServer := make([][]chunk, len(f.handles))
	var order []int
	for _, r := range runs {
		off := r.Off
		if off < 0 {
			return nil, nil, ioerr.New(ioerr.ErrArg, "transfer", "negative offset %d", off)
		}
		for _, b := range r.Bufs {
			for _, pc := range Pieces(off, int64(len(b)), f.unit, len(f.handles)) {
				if len(perServer[pc.Server]) == 0 {
					order = append(order, pc.Server)
				}
				perServer[pc.Server] = append(perServer[pc.Server], chunk{off: pc.Off, b: b[pc.Pos : pc.Pos+pc.Len]})
			}
			off += int64(len(b))
		}
	}
	return perServer, order, nil
}

// WriteV writes the buffers one after another from off.
func (f *File) WriteV(bufs [][]byte, off int64) (int, error) {
	return driver.WriteVAt(f, bufs, off)
}

// ReadV reads the buffers one after another from off.
func (f *File) ReadV(bufs [][]byte, off int64) (int, error) {
	return driver.ReadVAt(f, bufs, off)
}

// each asks every server the same and returns the first error.
func (f *File) each(r request) ([]reply, error) {
	out := make([]reply, len(f.handles))
	var first error
	for i, h := range f.handles {
		r.Handle = h
		rep, _, err := f.s.call(i, r, nil, 0)
		if err == nil {
			err = rep.err()
		}
		if err != nil && first == nil {
			first = err
		}
		out[i] = rep
	}
	return out, first
}

// Sync returns once every byte this rank handed over is on the file
// system and synced, with any write error of the file.
func (f *File) Sync() error {
	_, err := f.each(request{Kind: kSync})
	return err
}

// Truncate sets the size once the queued writes are written.
func (f *File) Truncate(size int64) error {
	if size < 0 {
		return ioerr.New(ioerr.ErrArg, "truncate", "negative size %d", size)
	}
	// One server truncates: the file is one file on the file system; the
	// others first write what they hold, so nothing lands past the new end
	// afterwards from before the call.
	if _, err := f.each(request{Kind: kSync}); err != nil {
		return err
	}
	rep, _, err := f.s.call(0, request{Kind: kTruncate, Handle: f.handles[0], Off: size}, nil, 0)
	if err == nil {
		err = rep.err()
	}
	return err
}

// Size is the largest size a server sees, queued bytes included.
func (f *File) Size() (int64, error) {
	reps, err := f.each(request{Kind: kSize})
	var n int64
	for _, r := range reps {
		n = max(n, r.V[0])
	}
	return n, err
}

// Allocate reserves space through server 0.
func (f *File) Allocate(off, length int64) error {
	rep, _, err := f.s.call(0, request{Kind: kAllocate, Handle: f.handles[0], Off: off, N: length}, nil, 0)
	if err == nil {
		err = rep.err()
	}
	return err
}

// Lock takes no lock. Locks guard read-modify-write (data sieving of
// writes) and atomic mode; through I/O servers no rank reads, modifies and
// writes back a range (adio turns write sieving off for such files) and
// atomic mode is refused, while each server applies the writes it holds in
// the order they arrived.
func (f *File) Lock(off, length int64, exclusive bool) error { return nil }

// Unlock releases nothing.
func (f *File) Unlock(off, length int64) error { return nil }

// Layout is the file's striping as server 0 sees it.
func (f *File) Layout() driver.Layout { return f.layout }

// Close waits, like Sync, for this rank's bytes to be written, and
// returns any write error of the file; the last close on a server closes
// its file.
func (f *File) Close() error {
	_, err := f.each(request{Kind: kClose})
	return err
}
