package ioserver

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/collio/collio/cache"
	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Config sets a server's limits.
type Config struct {
	// Buffer bounds the bytes a server holds (granted, queued and being
	// written); at least MinBuffer.
	Buffer int64
	// Warn receives the server's own trouble that no client asked about
	// (nil: dropped).
	Warn func(string)
}

// MinBuffer is the smallest server buffer: a few pieces, so credit keeps
// flowing.
const MinBuffer = 4096

// maxPiece bounds one grant and one read answer, so one large transfer
// does not hold all of a server's credit or need one huge message.
const maxPiece = 4 << 20

// ctrlMax is the largest request (an open with its hints).
const ctrlMax = 1 << 20

// sfile is a file open on the server for one or more clients.
type sfile struct {
	handle   uint64
	key      string
	f        driver.File
	refs     int
	queue    Compactor // received, not yet written
	inflight Compactor // handed to the writer
	added    int64     // writes queued so far
	written  int64     // writes on the file system so far
	batchEnd int64     // added when the batch in flight was taken
	synced   int64     // written at the last successful sync: later syncs with nothing new skip the system call
	err      error     // first write error, reported by every later sync and close
}

// pendingWrite is a write waiting for credit: its bytes fill ext in
// order; next is where the next grant starts (extent, bytes into it).
type pendingWrite struct {
	src     int
	file    *sfile
	ext     []Extent
	n       int64
	granted int64
	ei      int
	eo      int64
}

// slab is where part of a grant's bytes go: the file offset, and the
// position and length in the grant's buffer.
type slab struct{ off, at, n int64 }

// grant is credit given: a receive posted for the bytes.
type grant struct {
	file  *sfile
	slabs []slab
	buf   []byte
	req   comm.Request
}

// waiting is a request that must wait for the grants before it to land
// (the client's own earlier writes) and, for sync, close and truncate, for
// its file's queue to reach the file system.
type waiting struct {
	r      request
	ext    []Extent // kReadV: the ranges to read, in reply order
	seq    int64    // grants issued when it arrived
	drain  bool
	target int64 // added of its file once its grants landed; -1 before
}

type batch struct {
	file *sfile
	runs []Run
}

type batchDone struct {
	file  *sfile
	bytes int64
	err   error
}

// server is one server rank's state; only the loop goroutine touches it.
type server struct {
	c      comm.Comm
	cfg    Config
	used   int64 // bytes granted, queued and in flight
	files  map[uint64]*sfile
	byKey  map[string]*sfile
	nextID uint64

	writes   []*pendingWrite
	grants   []*grant
	issued   int64 // grants issued
	landed   int64 // grants received and queued
	waits    []*waiting
	sends    []comm.Request
	writing  *sfile
	toWriter chan batch
	fromWr   chan batchDone
	rr       int // round-robin position over files for the writer
	order    []*sfile

	stats          Stats // of files closed
	stolen, stoleB int64 // reads served partly from the queues
	stopping       *waiting
}

// Serve runs a server on c (the communicator clients reach it on) until
// a client asks it to stop; it returns the first failure of the server
// communicator. Write errors go to the clients at sync and close.
func Serve(c comm.Comm, cfg Config) error {
	cfg.Buffer = max(cfg.Buffer, MinBuffer)
	s := &server{c: c, cfg: cfg, files: map[uint64]*sfile{}, byKey: map[string]*sfile{},
		toWriter: make(chan batch), fromWr: make(chan batchDone, 1)}
	go s.writer()
	defer close(s.toWriter)
	return s.loop()
}

// writer writes batches in the background, each in one driver call where
// the driver takes batches (driver.WriteRuns). A failed batch still frees
// its memory; its error stays with the file.
func (s *server) writer() {
	for b := range s.toWriter {
		var n int64
		runs := make([]driver.Run, len(b.runs))
		for i, r := range b.runs {
			runs[i] = driver.Run{Off: r.Off, Bufs: [][]byte{r.Data}}
			n += int64(len(r.Data))
		}
		_, err := driver.WriteRuns(b.file.f, runs)
		s.fromWr <- batchDone{file: b.file, bytes: n, err: err}
	}
}

func (s *server) loop() error {
	buf := make([]byte, ctrlMax)
	ctrl, err := s.c.Irecv(buf, comm.AnySource, tagCtrl)
	if err != nil {
		return err
	}
	idle := 0
	for {
		progress := false
		if ctrl != nil {
			done, err := ctrl.Test()
			if err != nil {
				return fmt.Errorf("ioserver: receiving a request: %w", err)
			}
			if done {
				progress = true
				if err := s.handle(buf[:ctrl.Count()]); err != nil {
					return err
				}
				ctrl = nil
				if s.stopping == nil {
					if ctrl, err = s.c.Irecv(buf, comm.AnySource, tagCtrl); err != nil {
						return err
					}
				}
			}
		}
		p, err := s.step()
		if err != nil {
			return err
		}
		progress = progress || p
		if s.stopping != nil && ctrl == nil && s.idle() {
			return s.stop()
		}
		if progress {
			idle = 0
			continue
		}
		idle++
		backoff(idle)
	}
}

// backoff yields, then sleeps longer the longer nothing happens, up to a
// quarter millisecond: a server waiting for work costs little CPU and
// answers quickly.
func backoff(idle int) {
	switch {
	case idle < 50:
		runtime.Gosched()
	default:
		time.Sleep(time.Duration(min(idle, 250)) * time.Microsecond)
	}
}

// idle reports that nothing is pending.
func (s *server) idle() bool {
	return len(s.writes) == 0 && len(s.grants) == 0 && len(s.waits) == 0 && len(s.sends) == 0 && s.writing == nil && s.queued() == 0
}

func (s *server) queued() int64 {
	var n int64
	for _, f := range s.files {
		n += f.queue.Bytes()
	}
	return n
}

// step moves everything along once and reports whether anything moved.
func (s *server) step() (bool, error) {
	progress := false
	// Grants land in the order issued, so a client's writes queue in its order.
	for len(s.grants) > 0 {
		g := s.grants[0]
		done, err := g.req.Test()
		if !done {
			break
		}
		if err != nil {
			return false, fmt.Errorf("ioserver: receiving write data: %w", err)
		}
		before := g.file.queue.Bytes()
		for _, sl := range g.slabs {
			g.file.queue.Add(sl.off, g.buf[sl.at:sl.at+sl.n])
			g.file.added++
		}
		s.used += g.file.queue.Bytes() - before - int64(len(g.buf))
		s.grants = s.grants[1:]
		s.landed++
		progress = true
	}
	for len(s.writes) > 0 && s.used < s.cfg.Buffer {
		if err := s.grantNext(); err != nil {
			return false, err
		}
		progress = true
	}
	select {
	case d := <-s.fromWr:
		s.used -= d.bytes
		d.file.written = d.file.batchEnd
		d.file.inflight = Compactor{}
		if d.err != nil && d.file.err == nil {
			d.file.err = d.err
		}
		s.writing = nil
		progress = true
	default:
	}
	if s.writing == nil {
		s.startBatch()
	}
	for i := 0; i < len(s.waits); {
		w := s.waits[i]
		done, err := s.tryWaiting(w)
		if err != nil {
			return false, err
		}
		if done {
			s.waits = append(s.waits[:i], s.waits[i+1:]...)
			progress = true
			continue
		}
		i++
	}
	for i := 0; i < len(s.sends); {
		if done, _ := s.sends[i].Test(); done {
			s.sends = append(s.sends[:i], s.sends[i+1:]...)
			continue
		}
		i++
	}
	return progress, nil
}

// startBatch hands the next file's queue (round-robin over files) to the
// writer.
func (s *server) startBatch() {
	for k := range s.order {
		f := s.order[(s.rr+k)%len(s.order)]
		if f.queue.Len() == 0 {
			continue
		}
		s.rr = (s.rr + k + 1) % len(s.order)
		added := f.added
		runs := f.queue.Take()
		f.inflight = Compactor{runs: runs}
		s.writing = f
		f.batchEnd = added
		s.toWriter <- batch{file: f, runs: runs}
		return
	}
}

// grantNext gives the first waiting write as much credit as the buffer
// allows.
func (s *server) grantNext() error {
	w := s.writes[0]
	g := min(w.n-w.granted, s.cfg.Buffer-s.used, maxPiece)
	buf := make([]byte, g)
	req, err := s.c.Irecv(buf, w.src, tagData)
	if err != nil {
		return err
	}
	var slabs []slab
	for at := int64(0); at < g; {
		e := w.ext[w.ei]
		k := min(g-at, e.N-w.eo)
		slabs = append(slabs, slab{off: e.Off + w.eo, at: at, n: k})
		at += k
		if w.eo += k; w.eo == e.N {
			w.ei, w.eo = w.ei+1, 0
		}
	}
	s.grants = append(s.grants, &grant{file: w.file, slabs: slabs, buf: buf, req: req})
	s.used += g
	s.issued++
	w.granted += g
	if w.granted == w.n {
		s.writes = s.writes[1:]
	}
	return s.reply(w.src, reply{V: [3]int64{g}}, nil)
}

// reply sends an answer; the send completes in the background.
func (s *server) reply(dst int, r reply, data []byte) error {
	req, err := s.c.Isend(r.encode(data), dst, tagReply)
	if err != nil {
		return err
	}
	s.sends = append(s.sends, req)
	return nil
}

// handle takes one request.
func (s *server) handle(msg []byte) error {
	r, payload, err := decodeRequest(msg)
	if err != nil {
		return err
	}
	src := int(r.Src)
	if src < 0 || src >= s.c.Size() {
		return fmt.Errorf("ioserver: request from rank %d of %d", src, s.c.Size())
	}
	switch r.Kind {
	case kOpen:
		h, l, err := s.open(payload)
		return s.reply(src, reply{V: [3]int64{int64(h), l.StripeSize, int64(l.StripeCount)}}.withErr(err), nil)
	case kStop:
		s.stopping = &waiting{r: r, seq: s.issued, target: -1}
		return nil
	case kStats:
		st := s.stats
		for _, f := range s.files {
			st.Add(f.queue.Stats())
		}
		st.Stolen, st.StoleB = s.stolen, s.stoleB
		return s.reply(src, reply{V: [3]int64{st.Merged, st.Morphed, st.Stolen}}, nil)
	}
	f, ok := s.files[r.Handle]
	if !ok {
		return s.reply(src, reply{}.withErr(ioerr.New(ioerr.ErrBadFile, r.Kind.String(), "the I/O server has no open file with handle %d", r.Handle)), nil)
	}
	switch r.Kind {
	case kWrite:
		ext, err := decodeExtents(payload, r.N)
		if err != nil {
			return s.reply(src, reply{}.withErr(ioerr.New(ioerr.ErrArg, "write", "%v", err)), nil)
		}
		s.writes = append(s.writes, &pendingWrite{src: src, file: f, ext: ext, n: r.N})
	case kAllocate:
		return s.reply(src, reply{}.withErr(f.f.Allocate(r.Off, r.N)), nil)
	case kReadV:
		ext, err := decodeExtents(payload, r.N)
		if err == nil && r.N > maxPiece {
			err = fmt.Errorf("ioserver: read of %d bytes, more than %d", r.N, maxPiece)
		}
		if err != nil {
			return s.reply(src, reply{}.withErr(ioerr.New(ioerr.ErrArg, "read", "%v", err)), nil)
		}
		s.waits = append(s.waits, &waiting{r: r, ext: ext, seq: s.issued, target: -1})
	case kRead, kSize, kSync, kClose, kTruncate:
		drain := r.Kind == kSync || r.Kind == kClose || r.Kind == kTruncate
		s.waits = append(s.waits, &waiting{r: r, seq: s.issued, drain: drain, target: -1})
	default:
		return s.reply(src, reply{}.withErr(ioerr.New(ioerr.ErrArg, "ioserver", "unknown request %v", r.Kind)), nil)
	}
	return nil
}

// tryWaiting runs w once its conditions hold.
func (s *server) tryWaiting(w *waiting) (bool, error) {
	if s.landed < w.seq {
		return false, nil
	}
	f := s.files[w.r.Handle]
	src := int(w.r.Src)
	if w.drain {
		if w.target < 0 {
			w.target = f.added
		}
		if f.written < w.target {
			return false, nil
		}
	}
	switch w.r.Kind {
	case kRead:
		data, n, err := s.read(f, w.r.Off, w.r.N)
		return true, s.reply(src, reply{V: [3]int64{n}}.withErr(err), data[:n])
	case kReadV:
		// Every extent's bytes in full (zeros past end of file), and in V[0]
		// how many of them exist.
		out := make([]byte, 0, w.r.N)
		var valid int64
		for _, e := range w.ext {
			data, n, err := s.read(f, e.Off, e.N)
			if err != nil {
				return true, s.reply(src, reply{}.withErr(err), nil)
			}
			clear(data[n:])
			out = append(out, data...)
			valid += n
		}
		return true, s.reply(src, reply{V: [3]int64{valid}}, out)
	case kSize:
		n, err := s.size(f)
		return true, s.reply(src, reply{V: [3]int64{n}}.withErr(err), nil)
	case kSync:
		// Every compute rank syncs: one system call serves them all until
		// more data is written.
		err := f.err
		if err == nil && f.synced != f.written {
			if err = f.f.Sync(); err == nil {
				f.synced = f.written
			}
		}
		return true, s.reply(src, reply{}.withErr(err), nil)
	case kTruncate:
		err := f.err
		if err == nil {
			err = f.f.Truncate(w.r.Off)
		}
		return true, s.reply(src, reply{}.withErr(err), nil)
	case kClose:
		return true, s.reply(src, reply{}.withErr(s.release(f)), nil)
	}
	return true, nil
}

// read serves [off, off+n) from the queue, then the batch being written,
// then the file, and reports how many bytes exist (fewer at end of file).
func (s *server) read(f *sfile, off, n int64) ([]byte, int64, error) {
	if n < 0 || n > maxPiece || off < 0 {
		return nil, 0, ioerr.New(ioerr.ErrArg, "read", "bad read of %d bytes at %d", n, off)
	}
	p := make([]byte, n)
	end := off
	var gaps []Range
	for _, g := range f.queue.Steal(off, p) {
		gaps = append(gaps, f.inflight.Steal(g.Start, p[g.Start-off:g.End-off])...)
		end = max(end, f.inflight.Covered(g.Start, g.End))
	}
	end = max(end, f.queue.Covered(off, off+n))
	fromFile := int64(0)
	for _, g := range gaps {
		fromFile += g.End - g.Start
	}
	if fromFile < n {
		s.stolen++
		s.stoleB += n - fromFile
	}
	for _, g := range gaps {
		k, err := f.f.ReadAt(p[g.Start-off:g.End-off], g.Start)
		if err != nil && !errors.Is(err, io.EOF) {
			return p, 0, err
		}
		if k > 0 {
			end = max(end, g.Start+int64(k))
		}
	}
	return p, end - off, nil
}

func (s *server) size(f *sfile) (int64, error) {
	n, err := f.f.Size()
	return max(n, f.queue.End(), f.inflight.End()), err
}

// open opens the file for a client, or shares the server's open of the
// same driver path.
func (s *server) open(payload []byte) (uint64, driver.Layout, error) {
	a, err := decodeOpenArgs(payload)
	if err != nil {
		return 0, driver.Layout{}, err
	}
	key := a.Driver + ":" + a.Path
	if f, ok := s.byKey[key]; ok {
		f.refs++
		return f.handle, f.f.Layout(), nil
	}
	drv, ok := driver.ByName(a.Driver)
	if !ok {
		return 0, driver.Layout{}, ioerr.New(ioerr.ErrArg, "open", "the I/O server has no driver %q", a.Driver)
	}
	df, err := drv.Open(a.Path, driver.OpenOptions{Flags: a.Flags, Perm: a.Perm, Layout: a.Layout, Params: a.Params})
	if err != nil {
		return 0, driver.Layout{}, err
	}
	if df, err = s.withCache(df, a); err != nil {
		return 0, driver.Layout{}, err
	}
	s.nextID++
	f := &sfile{handle: s.nextID, key: key, f: df, refs: 1, synced: -1}
	s.files[f.handle] = f
	s.byKey[key] = f
	s.order = append(s.order, f)
	return f.handle, df.Layout(), nil
}

// withCache puts the E10 cache between the server and the file when the
// client's hints ask for it: the servers, not the compute ranks, write.
func (s *server) withCache(df driver.File, a openArgs) (driver.File, error) {
	if a.Flags&(driver.OWrOnly|driver.ORdWr) == 0 {
		return df, nil
	}
	set, err := hints.Resolve(a.Params, hints.Options{Lenient: true, Getenv: func(string) string { return "" }})
	if err != nil {
		return df, nil
	}
	opts, on := cache.OptionsFromHints(set, a.Driver+":"+a.Path, s.c.Rank())
	if !on {
		return df, nil
	}
	opts.Params = a.Params
	opts.Warn = s.cfg.Warn
	cf, err := cache.Open(df, opts)
	if err != nil {
		df.Close()
		return nil, err
	}
	return cf, nil
}

// release drops a client's reference; the last one closes the file. The
// reply carries the file's first write error.
func (s *server) release(f *sfile) error {
	f.refs--
	err := f.err
	if f.refs > 0 {
		return err
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	st := f.queue.Stats()
	st.Stolen, st.StoleB = 0, 0
	s.stats.Add(st)
	delete(s.files, f.handle)
	delete(s.byKey, f.key)
	for i, o := range s.order {
		if o == f {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.rr = 0
	return err
}

// stop closes what clients left open and answers the stop request with
// the first error.
func (s *server) stop() error {
	var first error
	for len(s.order) > 0 {
		f := s.order[0]
		f.refs = 1
		if err := s.release(f); err != nil && first == nil {
			first = err
		}
	}
	if err := s.reply(int(s.stopping.r.Src), reply{}.withErr(first), nil); err != nil {
		return err
	}
	return comm.Waitall(s.sends...)
}
