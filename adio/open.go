package adio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/stack"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/commpool"
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/topo"
)

// OpenOptions are the optional inputs of Open.
type OpenOptions struct {
	// Hints are the caller's hints (MPI_Info key/value pairs).
	Hints map[string]string
	// Lenient makes invalid hint values warnings instead of errors (the C
	// interposer's behaviour).
	Lenient bool
	// Getenv reads environment variables (ROMIO_HINTS, COLLIO_PRINT_HINTS);
	// nil means os.Getenv.
	Getenv func(string) string
	// Stderr receives COLLIO_PRINT_HINTS output and warnings on rank 0; nil
	// means os.Stderr.
	Stderr io.Writer
	// NoSharedPointer skips the shared file pointer, whose MPI window
	// costs an MPI_Win_allocate at the first open on a communicator;
	// shared and ordered calls then fail with ErrUnsupported.
	NoSharedPointer bool
	// Local is a problem the caller found before the open (the C library:
	// an environment variable it does not accept). The open fails with it
	// on every rank, through the agreement open makes anyway.
	Local error
}

// Open opens path collectively on every rank of c. Every rank must pass
// the same path, mode and hints (hints that must agree are checked); every
// rank returns the same error if any rank fails, and then nothing stays
// open.
func Open(c comm.Comm, path string, mode Mode, opts OpenOptions) (*File, error) {
	if c == nil {
		return nil, ioerr.New(ioerr.ErrArg, "open", "communicator is nil")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	f := &File{comm: shaped(c), path: path, mode: mode, view: DefaultView(), viewsContiguous: true, dsWriteOK: true, stderr: stderr}
	f.viewShape = sameViewShape(f.view.Filetype, c.Size())
	f.learned.view = f.viewShape
	f.buffers.OffHeap() // released at Close
	if err := f.open(c, opts, getenv); err != nil {
		if f.entry != nil {
			f.leaveComm()
		}
		return nil, err
	}
	return f, nil
}

func (f *File) open(c comm.Comm, opts OpenOptions, getenv func(string) string) error {
	// Local checks first; one agreement reports the first failure everywhere.
	err := opts.Local
	if err == nil {
		err = f.mode.check()
	}
	if err == nil {
		// The switches the Go API reads; a value not accepted fails the
		// open rather than being taken for on or off.
		err = envvar.Check(getenv, envvar.PrintHints, envvar.SharedFPServer, envvar.QuietMonitor)
	}
	if err == nil && f.path == "" {
		err = ioerr.New(ioerr.ErrArg, "open", "path is empty")
	}
	if err == nil {
		var set *hints.Set
		if set, err = hints.Resolve(opts.Hints, hints.Options{Lenient: opts.Lenient, Getenv: getenv}); err == nil {
			f.setHints(set)
		}
	}
	if err == nil {
		f.configList, err = hints.ParseConfigList(f.hints.String(hints.CBConfigList))
	}
	var probe uint32
	if err == nil && c.Rank() == 0 {
		// One rank asks the file system what it is (a statfs, a round
		// trip to the servers on NFS and FUSE); join hands the answer to
		// every rank.
		probe, err = stack.Probe(f.path)
	}
	if err == nil {
		// A deferred close of this file (e10_cache_deferred_close) may
		// still be copying its cache; its failure is reported by this
		// first agreement (one collective fewer per open).
		err = stack.WaitDeferredCloses(f.path)
	}
	magic, err := f.join(c, err, probe)
	if err != nil {
		return err
	}
	if f.stack, err = stack.BuildKnown(c, f.path, magic); err != nil {
		// Not reached: rank 0's Probe rejected such a path in join, and
		// BuildKnown decides alike on every rank.
		return f.wrap(err, "open")
	}
	if f.stack.Servers() {
		f.viaServers, f.cfg.ioServers = true, true
		// Nobody reads, modifies and writes back ranges the servers may
		// still hold newer bytes of.
		f.dsWriteOK = false
	}
	aggWarning, err := f.placeAggregators()
	if err != nil {
		return err
	}
	f.noteNodeCaches()
	if err := f.openDriverFiles(); err != nil {
		return err
	}
	f.noteDirect()
	if err := f.deriveHints(); err != nil {
		f.closeDriverFile()
		return err
	}
	if err := f.openCache(); err != nil {
		f.closeDriverFile()
		return err
	}
	if f.mode&ModeAppend != 0 {
		size, err := f.sizeShared()
		if err := f.agree("open", err); err != nil {
			f.closeDriverFile()
			return err
		}
		f.fp = size // the default view counts in bytes
	}
	if err := f.openSharedPointer(opts.NoSharedPointer); err != nil {
		f.closeDriverFile()
		return err
	}
	if aggWarning != "" {
		f.setHints(f.hints.WithWarning(aggWarning))
	}
	if f.rank() == 0 {
		for _, w := range f.hints.Warnings() {
			io.WriteString(f.stderr, "collio: warning: "+w+"\n")
		}
		if on, _ := envvar.Switch(envvar.PrintHints, getenv(envvar.PrintHints)); on {
			io.WriteString(f.stderr, "collio: effective hints for "+f.path+":\n")
			f.hints.Fprint(f.stderr)
		}
	}
	f.resumeMeasured()
	f.startRecording(getenv("COLLIO_RECORD"))
	return nil
}

// join agrees, in one Allgather on the caller's communicator c, on open's
// local checks, the access mode, the hints that must agree (by digest) and
// which private duplicate of c the file uses: one kept from an earlier
// open on c (package commpool) when every rank offers the same, else a
// new one. The mode and digest are sent as words that every rank
// compares, so all ranks take the same branch. It also hands rank 0's
// probe of the file system (stack.Probe) to every rank, and returns it.
func (f *File) join(c comm.Comm, local error, probe uint32) (uint32, error) {
	pool := commpool.Of(c)
	var reuse, next int64
	if pool != nil {
		reuse, next = pool.Candidate()
	}
	if reuse == 0 {
		// A duplicate made ahead (Warm) for a congruent communicator.
		reuse = commpool.SpareFor(c)
	}
	var digest uint64
	if f.hints != nil {
		digest = f.hints.AgreeDigest()
	}
	if local != nil {
		local = f.wrap(local, "open")
	}
	const k = 5
	all, err := agree.Record(c, local, []uint64{uint64(f.mode), digest, uint64(reuse), uint64(next), uint64(probe)})
	if err != nil {
		return 0, err
	}
	magic := uint32(all[4]) // rank 0's
	sameMode, sameHints, sameReuse := true, true, true
	for r := 1; r < c.Size(); r++ {
		w := all[k*r:]
		sameMode = sameMode && w[0] == all[0]
		sameHints = sameHints && w[1] == all[1]
		sameReuse = sameReuse && w[2] == all[2]
		next = max(next, int64(w[3]))
	}
	if !sameMode {
		return 0, &ioerr.Error{Class: ioerr.ErrNotSame, Op: "open", Path: f.path, Rank: -1,
			Msg: "ranks passed different access modes"}
	}
	if !sameHints {
		if err := hints.CheckSame(c, f.hints); err != nil {
			return 0, err
		}
	}
	if !sameReuse && pool != nil {
		// Only a program that closed files in different orders on
		// different ranks gets here: no entry is trusted again.
		pool.Poison()
	}
	var e *commpool.Entry
	switch {
	case sameReuse && commpool.IsSpare(reuse):
		if e = commpool.TakeSpare(reuse); e != nil && pool != nil {
			e.ID = next // c's own from now on
			pool.Made(next)
		}
	case sameReuse && reuse != 0:
		e = pool.Take(reuse)
	}
	if e == nil {
		// A private communicator keeps collio's messages apart from the
		// application's, as ROMIO does.
		dc, err := c.Dup()
		if err != nil {
			return 0, ioerr.Wrap(err, "open", f.path, c.Rank())
		}
		if pool != nil {
			pool.Made(next)
		}
		e = commpool.NewEntry(shaped(dc), next)
	}
	f.entry, f.pool, f.comm = e, pool, e.Comm
	return magic, nil
}

// leaveComm gives the file's private communicator back to its pool for the
// next open, or releases it (collectively) where there is no pool or it is
// full.
func (f *File) leaveComm() error {
	e := f.entry
	f.entry = nil
	if f.pool != nil && f.pool.Put(e) {
		return nil
	}
	return e.Release()
}

// Keep keeps v with the file's private communicator: a later open on the
// same application communicator that reuses it finds v with Kept, and v is
// released (collectively) when the communicator is (the shared file
// pointer is kept this way).
func (f *File) Keep(key any, v Releaser) { f.entry.SetValue(key, v) }

// Kept returns what Keep kept under key, or nil.
func (f *File) Kept(key any) Releaser { return f.entry.Value(key) }

// Releaser is state kept with a private communicator (see Keep).
type Releaser = commpool.Releaser

// openDriverFiles opens the file on every rank. When creating, rank 0
// creates it first (with excl if asked) so that exactly one rank can win an
// exclusive create; the others then open the existing file.
//
// With romio_no_indep_rw only the aggregators open the file now (ROMIO's
// deferred open); other ranks open it if they ever need it (ensureOpen).
func (f *File) openDriverFiles() error {
	params := f.hints.Map()
	// Drivers do not know ranks; fault injection needs to (collio_fault_ranks).
	params[hints.CollioRank] = strconv.Itoa(f.rank())
	f.dopts = driver.OpenOptions{Perm: 0o644, Layout: f.requestedLayout(), Params: params}
	creator := 0
	deferred := f.hints.Bool(hints.RomioNoIndepRW)
	if deferred {
		creator = f.aggs[0]
	}
	creating := f.mode&ModeCreate != 0
	if creating {
		var err error
		if f.rank() == creator {
			err = f.openLocal(driver.OCreate | f.exclFlag())
		}
		if err := f.agree("open", err); err != nil {
			return err
		}
	}
	var err error
	if (!creating || f.rank() != creator) && (!deferred || f.isAggregator()) {
		err = f.openLocal(0)
	}
	// The agreement also shares the striping the creator (or the first
	// aggregator) sees, which ranks that deferred their open do not know,
	// and which ranks have the file open.
	var mine [4]uint64
	if err == nil && f.f != nil {
		l := f.f.Layout()
		mine = [4]uint64{uint64(l.StripeSize), uint64(int64(l.StripeCount)), uint64(int64(l.StartTarget)), 1}
	}
	if err != nil {
		err = f.wrap(err, "open")
	}
	all, err := agree.Record(f.comm, err, mine[:])
	if err != nil {
		f.closeDriverFile()
		return f.notShared(err, all, len(mine))
	}
	w := all[len(mine)*creator:]
	f.layout = driver.Layout{StripeSize: int64(w[0]), StripeCount: int(int64(w[1])), StartTarget: int(int64(w[2]))}
	return nil
}

// notShared rewords an open that failed with ErrNotFound on some ranks
// while other ranks have the file open (words: every rank's record, k
// words each, the last one 1 where the file is open): the path is then
// not on a file system every rank sees, which is what a user must fix,
// typically a node-local directory such as /tmp in a job across nodes.
// Every rank has the same words and error, so the text stays the same.
func (f *File) notShared(err error, words []uint64, k int) error {
	if !errors.Is(err, ioerr.ErrNotFound) || len(words) == 0 {
		return err
	}
	for r := 0; r < f.comm.Size(); r++ {
		if words[k*r+k-1] == 1 {
			return &ioerr.Error{Class: ioerr.ErrNotFound, Op: "open", Path: f.path, Rank: -1, Err: err,
				Msg: fmt.Sprintf("rank %d has the file open, but not every rank can see it: is its directory on a file system every node shares? (a node-local directory such as /tmp differs on every node) [%v]", r, err)}
		}
	}
	return err
}

// isAggregator reports whether this rank is a collective-buffering aggregator.
func (f *File) isAggregator() bool { return slices.Contains(f.aggs, f.rank()) }

// ensureOpen opens the file on a rank that deferred its open, when an
// independent operation needs it. Such a late open is not cached (the
// E10 cache is set up collectively at open): its writes go to the global
// file.
func (f *File) ensureOpen(op string) error {
	if f.f != nil {
		return nil
	}
	if err := f.openLocal(0); err != nil {
		return ioerr.Wrap(err, op, f.path, f.rank())
	}
	return nil
}

func (f *File) closeDriverFile() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// placeAggregators finds the nodes and picks the aggregators from cb_nodes
// and cb_config_list (ROMIO's rules; default one per node). It returns a
// warning when the list matched no host. The nodes are kept with the
// private communicator, so an open that reuses it does not ask again.
func (f *File) placeAggregators() (string, error) {
	size := int(f.hints.Int(hints.CollioNodeSize))
	kn, ok := f.Kept(nodesKey{size}).(keptNodes)
	if !ok {
		nodes, err := topo.Discover(f.comm, size)
		if err := f.agree("open", err); err != nil {
			return "", err
		}
		kn = keptNodes{nodes}
		f.Keep(nodesKey{size}, kn)
	}
	aggs, warning := topo.Aggregators(kn.Nodes, int(f.hints.Int(hints.CBNodes)), f.configList)
	f.nodes, f.aggs = kn.Nodes, aggs
	if sc, ok := f.comm.(shapedComm); ok && f.nodes.Count() > 1 {
		if p2p, ok := comm.As[p2pGatherer](sc.Comm); ok {
			f.comm = spreadComm{shapedComm: sc, p2p: p2p}
		}
	}
	return warning, nil
}

// nodesKey keeps the node discovery of a private communicator, per
// collio_node_size.
type nodesKey struct{ size int }

type keptNodes struct{ topo.Nodes }

func (keptNodes) Release() error { return nil }

// sizeShared returns the file size, opening the file if this rank
// deferred its open.
func (f *File) sizeShared() (int64, error) {
	if err := f.ensureOpen("get_size"); err != nil {
		return 0, err
	}
	size, err := f.f.Size()
	if err != nil || !f.pub.pending {
		return size, err
	}
	// Collective writes whose syncs are still delayed (publish.go) end by
	// their span's end, which every rank knows alike, and everything
	// before them has landed: the size they leave needs no wait for the
	// syncs (HDF5 asks for it at each flush).
	return max(size, f.pub.span.End), nil
}

func (f *File) exclFlag() int {
	if f.mode&ModeExcl != 0 {
		return driver.OExcl
	}
	return 0
}

// openLocal opens the driver file on this rank. A writer opens read-write
// so that data sieving can read the holes it rewrites; if that is refused
// it opens write-only and does without data sieving, as ROMIO does.
func (f *File) openLocal(extra int) error {
	dopts := f.dopts
	dopts.Flags = f.mode.osFlags() | extra
	file, err := f.stack.Open(dopts)
	if err != nil && f.mode&ModeWrOnly != 0 && errors.Is(err, fs.ErrPermission) {
		dopts.Flags = driver.OWrOnly | extra
		file, err = f.stack.Open(dopts)
		f.dsWriteOK = false
	}
	if err != nil {
		return f.openError(err)
	}
	f.f = file
	return nil
}

// openError words the common open failures so users see what to fix.
func (f *File) openError(err error) error {
	switch ioerr.ClassOf(err) {
	case ioerr.ErrNotFound:
		if f.mode&ModeCreate == 0 {
			return &ioerr.Error{Class: ioerr.ErrNotFound, Op: "open", Path: f.path, Rank: f.rank(), Err: err,
				Msg: "file does not exist (open without create)"}
		}
		return &ioerr.Error{Class: ioerr.ErrNotFound, Op: "open", Path: f.path, Rank: f.rank(), Err: err,
			Msg: "cannot create: the directory does not exist"}
	case ioerr.ErrExists:
		return &ioerr.Error{Class: ioerr.ErrExists, Op: "open", Path: f.path, Rank: f.rank(), Err: err,
			Msg: "file exists and excl was given"}
	case ioerr.ErrAccess:
		return &ioerr.Error{Class: ioerr.ErrAccess, Op: "open", Path: f.path, Rank: f.rank(), Err: err,
			Msg: "permission denied (check the file's and the directory's permissions)"}
	}
	return f.wrap(err, "open")
}

// requestedLayout is the striping asked for through hints, for drivers
// that set layouts at create.
func (f *File) requestedLayout() driver.Layout {
	return driver.Layout{
		StripeSize:  f.hints.Int(hints.StripingUnit),
		StripeCount: int(f.hints.Int(hints.StripingFactor)),
		StartTarget: int(f.hints.Int(hints.StartIODevice)),
	}
}

// deriveHints records values collio computed at open as effective hints:
// the striping the file system reports and the number of ranks.
func (f *File) deriveHints() error {
	set := f.hints
	var err error
	with := func(key, value string) {
		if err == nil {
			set, err = set.With(key, value)
		}
	}
	if l := f.layout; l.StripeSize > 0 {
		with(hints.StripingUnit, strconv.FormatInt(l.StripeSize, 10))
		with(hints.StripingFactor, strconv.Itoa(l.StripeCount))
		if l.StartTarget >= 0 {
			with(hints.StartIODevice, strconv.Itoa(l.StartTarget))
		}
	}
	// As in ROMIO, cb_nodes reports the aggregators actually used.
	with(hints.CBNodes, strconv.Itoa(len(f.aggs)))
	// Every rank derives from the same striping and aggregators, so an
	// error here is the same on every rank: no agreement needed.
	if err != nil {
		return f.wrap(err, "open")
	}
	f.setHints(set)
	return nil
}

// openCache puts the E10 node-local cache (built by the driver stack)
// between the ranks and the global file when e10_cache is enable or
// coherent: every rank that opened the file for writing wraps its driver
// file, so aggregators' collective writes and independent writes land in
// the cache, and Sync and Close (through the driver file) wait for the
// copies and return their errors, which the usual agreement spreads. If
// the cache cannot be opened on some rank, no rank uses it: each writes
// the global file directly, rank 0 warns once and e10_cache reads back as
// disable; but if some rank refused its cache files as unsafe, the open
// fails on every rank with that rank's error.
func (f *File) openCache() error {
	// With I/O servers the cache sits under the servers, which open it
	// from the hints they are given (the stack wants no cache then).
	if !f.mode.canWrite() {
		return nil
	}
	rank := f.rank()
	warn := func(msg string) { // a rank's own trouble, after open
		io.WriteString(f.stderr, "collio: warning: rank "+strconv.Itoa(rank)+": "+msg+"\n")
	}
	c, wanted := f.stack.OpenCache(f.f, f.hints, rank, f.dopts.Params, warn)
	if !wanted {
		return nil
	}
	err := c.Err()
	// A cache path that is not safe to use (a symbolic link or another
	// user's file at a cache name, a planted journal) fails the open on
	// every rank rather than falling back: it may be an attack, and the
	// user should hear of it. Each rank says whether its failure is one
	// in the agreement's record.
	var unsafe uint64
	if c.Unsafe() {
		unsafe = 1
		err = &ioerr.Error{Class: ioerr.ErrAccess, Rank: -1, Err: err, Msg: err.Error()}
	}
	flags, aerr := f.agreeRecord("open", err, []uint64{unsafe})
	if aerr != nil && slices.Contains(flags, 1) {
		c.Drop()
		// The agreement gave the lowest failing rank's error, which may be
		// another one: give every rank the lowest refusing rank's (a second
		// Allgather, on this failure only).
		if unsafe == 0 {
			err = nil
		}
		return agree.Errors(f.comm, f.wrap(err, "open"))
	}
	if aerr == nil {
		if cf := c.Use(); cf != nil {
			f.f = cf
		}
		f.cached = true
		// Read-modify-write (data sieving of independent writes, holes in
		// two-phase windows) reads the global file, where data still in
		// another rank's cache is stale, and would write the stale bytes
		// back over it: with the cache, ranks write only the bytes they
		// were given, unless romio_ds_write=enable insists and the cache is
		// coherent, whose locks keep each window until its copy lands.
		// (Under e10_cache=enable, sieving ranks of one collective call each
		// cached a window holding the others' bytes as they were before the
		// call, and whichever copy landed last undid the others' writes.)
		if f.hints.Enum(hints.RomioDSWrite) != hints.Enable || f.hints.Enum(hints.E10Cache) != hints.E10Coherent {
			f.dsWriteOK = false
		}
		return nil
	}
	c.Drop()
	if ioerr.ClassOf(aerr) == ioerr.ErrInternComm {
		return aerr
	}
	f.setHints(f.hints.WithWarning(fmt.Sprintf("e10_cache: the cache could not be used (%v); every rank writes the global file directly", aerr)))
	if set, err := f.hints.With(hints.E10Cache, hints.Disable); err == nil {
		f.setHints(set)
	}
	return nil
}

// shapedComm remembers a communicator's rank and size, which never change:
// asking MPI costs a cgo call, several times in every collective call.
type shapedComm struct {
	comm.Comm
	rank, size int
}

func shaped(c comm.Comm) comm.Comm { return shapedComm{Comm: c, rank: c.Rank(), size: c.Size()} }

func (c shapedComm) Rank() int { return c.rank }
func (c shapedComm) Size() int { return c.size }

// Unwrap gives the communicator underneath, for code that looks for its
// type (virtual nodes, counting).
func (c shapedComm) Unwrap() comm.Comm { return c.Comm }

// p2pGatherer is an MPI communicator's gather with a deadline over
// point-to-point messages (mpi.Comm.AllgatherP2P).
type p2pGatherer interface {
	AllgatherP2P(send, recv []byte, d time.Duration) (bool, error)
}

// spreadComm is the communicator of a file whose ranks span several
// nodes. Its agreements (agree.AllgatherWithin finds AllgatherFor) gather
// with ceil(log2 n) point-to-point messages per rank, where MPI_Iallgather
// sends n-1: over TCP, with ranks sharing cores, that made every
// collective step several times as slow. On one node MPI_Iallgather's
// single round is the faster.
type spreadComm struct {
	shapedComm
	p2p p2pGatherer
}

func (c spreadComm) AllgatherFor(send, recv []byte, d time.Duration) (bool, error) {
	return c.p2p.AllgatherP2P(send, recv, d)
}

// Warm makes, collectively, the private duplicate of c that the first open
// on c would make, with its node layout, and keeps it as a spare (package
// commpool): the first open on c, or on any communicator with the same
// ranks in the same order (IOR opens on a split of MPI_COMM_WORLD), takes
// it ready, with its shared file pointer unless noSharedPointer (see
// OpenOptions). extra may keep more with it; it runs on every rank. A failure on any rank leaves nothing
// kept, on every rank, and is returned. Warm does nothing for
// communicators that cannot compare themselves (not MPI) or that a spare
// already serves.
func Warm(c comm.Comm, noSharedPointer bool, extra func(dc comm.Comm, keep func(key any, v Releaser)) error) error {
	if _, ok := c.(commpool.Congruent); !ok || commpool.SpareFor(c) != 0 {
		return nil
	}
	dc, err := c.Dup()
	if err != nil {
		return err
	}
	e := commpool.NewEntry(shaped(dc), 0)
	nodes, err := topo.Discover(e.Comm, 0)
	if err == nil {
		e.SetValue(nodesKey{0}, keptNodes{nodes})
		if maker, ok := comm.As[comm.CounterMaker](e.Comm); ok && !noSharedPointer {
			var k comm.Counter
			if k, err = maker.NewCounter(0); err == nil {
				e.SetValue(sharedKey{}, keptCounter{k})
			}
		}
		if err == nil && extra != nil {
			err = extra(e.Comm, e.SetValue)
		}
	}
	if err := agree.Errors(e.Comm, err); err != nil {
		e.Release()
		return err
	}
	commpool.AddSpare(e)
	return nil
}
