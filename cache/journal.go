package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The journal sits beside the cache file and lists the extents whose data
// may exist only in the cache, so that collio recover (or the next open of
// the same file on the same rank) can copy them to the global file after a
// crash.
//
// Layout (little endian):
//
//	header: "COLLIOJ1" | flags u32 | dev u64 | ino u64 |
//	        len u32 | global path | len u32 | cache path | crc32 u32
//	record: kind u8 | 0 0 0 | crc32 u32 | seq u64 | off i64 | len i64   (32 bytes)
//
// The global path is canonical (absolute, driver prefixes kept), the cache
// path an operating-system path; dev and ino identify the global file when
// the journal was created. Record kinds: 'W' a write of [off, off+len)
// that reached the cache; 'C' a checkpoint: every 'W' with seq <= the
// checkpoint's seq is in the global file and durable. When a checkpoint
// covers every record the journal is truncated to its header instead. A
// record whose crc does not match ends the journal (a torn append).
//
// Durability rule: a write's record is appended (pwrite, not fsync) after
// its data reached the cache file and before the write returns, so every
// write that returned survives the death of the process (the data and the
// record are in the node's page cache). A node crash can lose the writes
// since the last Sync, which MPI allows: only MPI_File_sync promises
// durability. Sync makes the copied data durable in the global file and
// then fsyncs a checkpoint; with flush_none, which copies nothing at Sync,
// Sync fsyncs the cache file and then the journal instead.
//
// The writer holds an flock on the journal while the cache is open, so
// recovery skips journals in use.
//
// A journal is trusted only as far as safety.go checks it: a regular file
// of this user, whose records are copied from the cache file beside it
// and nowhere else, and whose dev and ino are never zero.

const (
	journalMagic = "COLLIOJ1"
	recordSize   = 32
	kindWrite    = 'W'
	kindCheck    = 'C'
	flagDiscard  = 1
)

type journal struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	hdrLen int64
	pos    int64  // where the next record goes
	seq    uint64 // seq of the last record appended
	// dirty: records were appended since the last checkpoint.
	dirty bool
}

// journalInfo is what readJournal finds in a journal.
type journalInfo struct {
	Global  string // canonical global path
	Cache   string // cache file (operating-system path)
	Discard bool
	id      identity
	// Pending are the writes no checkpoint covers, in journal order.
	Pending []record
	lastSeq uint64
}

type record struct {
	kind     byte
	seq      uint64
	off, len int64
}

func encodeHeader(global, cachePath string, discard bool, id identity) []byte {
	b := []byte(journalMagic)
	var flags uint32
	if discard {
		flags |= flagDiscard
	}
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = binary.LittleEndian.AppendUint64(b, id.dev)
	b = binary.LittleEndian.AppendUint64(b, id.ino)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(global)))
	b = append(b, global...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cachePath)))
	b = append(b, cachePath...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func encodeRecord(r record) []byte {
	b := make([]byte, recordSize)
	b[0] = r.kind
	binary.LittleEndian.PutUint64(b[8:], r.seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(r.off))
	binary.LittleEndian.PutUint64(b[24:], uint64(r.len))
	binary.LittleEndian.PutUint32(b[4:], recordCRC(b))
	return b
}

func recordCRC(b []byte) uint32 {
	c := crc32.ChecksumIEEE(b[:1])
	return crc32.Update(c, crc32.IEEETable, b[8:recordSize])
}

var errBadJournal = errors.New("not a collio cache journal")

// badJournal is errBadJournal naming what is wrong.
func badJournal(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadJournal, fmt.Sprintf(format, args...))
}

// parseJournal decodes a whole journal file. A damaged header, or a record
// whose checksum matches but whose range is impossible, is an error
// wrapping errBadJournal that says what is wrong; a record whose checksum
// does not match ends the journal (a torn append).
func parseJournal(b []byte) (*journalInfo, int64, error) {
	rd := func(n int) ([]byte, bool) {
		if len(b) < n {
			return nil, false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	all := b
	magic, ok := rd(8)
	if !ok || string(magic) != journalMagic {
		return nil, 0, errBadJournal
	}
	fixed, ok := rd(20)
	if !ok {
		return nil, 0, badJournal("header truncated at %d bytes", len(all))
	}
	info := &journalInfo{
		Discard: binary.LittleEndian.Uint32(fixed)&flagDiscard != 0,
		id:      identity{dev: binary.LittleEndian.Uint64(fixed[4:]), ino: binary.LittleEndian.Uint64(fixed[12:])},
	}
	str := func(what string) (string, error) {
		l, ok := rd(4)
		if !ok {
			return "", badJournal("header truncated before the %s's length", what)
		}
		n := binary.LittleEndian.Uint32(l)
		s, ok := rd(int(n))
		if !ok {
			return "", badJournal("the %s's length %d exceeds the %d bytes left", what, n, len(b))
		}
		return string(s), nil
	}
	var err error
	if info.Global, err = str("global path"); err != nil {
		return nil, 0, err
	}
	if info.Cache, err = str("cache path"); err != nil {
		return nil, 0, err
	}
	hdrLen := len(all) - len(b)
	sum, ok := rd(4)
	if !ok || binary.LittleEndian.Uint32(sum) != crc32.ChecksumIEEE(all[:hdrLen]) {
		return nil, 0, badJournal("header checksum missing or wrong")
	}
	hdrLen += 4
	var recs []record
	var upto uint64
	for i := 0; len(b) >= recordSize; i++ {
		r := b[:recordSize]
		b = b[recordSize:]
		if binary.LittleEndian.Uint32(r[4:]) != recordCRC(r) {
			break
		}
		rec := record{kind: r[0], seq: binary.LittleEndian.Uint64(r[8:]),
			off: int64(binary.LittleEndian.Uint64(r[16:])), len: int64(binary.LittleEndian.Uint64(r[24:]))}
		switch rec.kind {
		case kindWrite:
			if rec.off < 0 || rec.len < 0 || rec.off > math.MaxInt64-rec.len {
				return nil, 0, badJournal("record %d (at byte %d): write of %d bytes at offset %d is out of range",
					i, hdrLen+i*recordSize, rec.len, rec.off)
			}
			recs = append(recs, rec)
		case kindCheck:
			upto = max(upto, rec.seq)
		}
		info.lastSeq = max(info.lastSeq, rec.seq)
	}
	for _, r := range recs {
		if r.seq > upto && r.len > 0 {
			info.Pending = append(info.Pending, r)
		}
	}
	return info, int64(hdrLen), nil
}

// readJournal reads the journal at path.
func readJournal(path string) (*journalInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	info, _, err := parseJournal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// errJournalBusy says that another open holds the journal.
var errJournalBusy = errors.New("the cache journal is in use by another open (a running process, or a deferred close still copying)")

// lockJournal opens the journal at path and takes its flock without
// waiting. The journal must be a regular file of this user, not a
// symbolic link (openOwned); with create, a missing one is created
// exclusively.
func lockJournal(path string, create bool) (*os.File, error) {
	f, err := openOwned(path, "journal", unix.O_RDWR, 0)
	for i := 0; create && errors.Is(err, os.ErrNotExist); i++ {
		f, err = openOwned(path, "journal", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) || i == 2 {
			break
		}
		// Created by someone else in between: look at what it is.
		f, err = openOwned(path, "journal", unix.O_RDWR, 0)
	}
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, fmt.Errorf("%s: %w", path, errJournalBusy)
		}
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return f, nil
}

// openJournal opens (creating) the journal for a new cache and locks it.
// If it already holds pending records from an earlier open that did not
// finish, they are returned (stale != nil) and the caller decides; the
// journal is then not reset.
func openJournal(path, global, cachePath string, discard bool) (j *journal, stale *journalInfo, err error) {
	f, err := lockJournal(path, true)
	if err != nil {
		return nil, nil, err
	}
	if b, err := io.ReadAll(f); err == nil && len(b) > 0 {
		if info, _, err := parseJournal(b); err == nil && len(info.Pending) > 0 {
			return &journal{f: f, path: path}, info, nil
		}
	}
	j = &journal{f: f, path: path}
	if err := j.reset(global, cachePath, discard); err != nil {
		f.Close()
		return nil, nil, err
	}
	return j, nil, nil
}

// reset rewrites the journal as a header without records and fsyncs it.
func (j *journal) reset(global, cachePath string, discard bool) error {
	id := identityOf(global)
	if id == (identity{}) {
		// A journal without it could not tell a replaced global file.
		return fmt.Errorf("cannot identify the global file %s (stat failed)", global)
	}
	hdr := encodeHeader(global, cachePath, discard, id)
	if err := j.f.Truncate(0); err != nil {
		return err
	}
	if _, err := j.f.WriteAt(hdr, 0); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.hdrLen, j.pos = int64(len(hdr)), int64(len(hdr))
	return nil
}

// append records a write that reached the cache and returns its seq.
func (j *journal) append(off, n int64) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	seq := j.seq + 1
	if _, err := j.f.WriteAt(encodeRecord(record{kind: kindWrite, seq: seq, off: off, len: n}), j.pos); err != nil {
		return 0, err
	}
	j.seq, j.pos, j.dirty = seq, j.pos+recordSize, true
	return seq, nil
}

// appendSpans records writes that reached the cache, in order, with one
// write of the journal, and returns the seq of the first; the others
// follow it.
func (j *journal) appendSpans(spans []span) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	first := j.seq + 1
	b := make([]byte, 0, len(spans)*recordSize)
	for i, s := range spans {
		b = append(b, encodeRecord(record{kind: kindWrite, seq: first + uint64(i), off: s.start, len: s.end - s.start})...)
	}
	if _, err := j.f.WriteAt(b, j.pos); err != nil {
		return 0, err
	}
	j.seq, j.pos, j.dirty = first+uint64(len(spans))-1, j.pos+int64(len(b)), true
	return first, nil
}

// lastSeq returns the seq of the last record appended.
func (j *journal) lastSeq() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// checkpoint records that every write with seq <= upto is durable in the
// global file, and fsyncs it. When that is every record, the journal is
// truncated to its header.
func (j *journal) checkpoint(upto uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.dirty || upto == 0 {
		return nil
	}
	if upto >= j.seq {
		if err := j.f.Truncate(j.hdrLen); err != nil {
			return err
		}
		j.pos, j.dirty = j.hdrLen, false
	} else {
		if _, err := j.f.WriteAt(encodeRecord(record{kind: kindCheck, seq: upto}), j.pos); err != nil {
			return err
		}
		j.pos += recordSize
	}
	return j.f.Sync()
}

// sync fsyncs the journal.
func (j *journal) sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Sync()
}

// close releases the lock and closes the journal; remove deletes it first.
func (j *journal) close(remove bool) error {
	var err error
	if remove {
		err = os.Remove(j.path)
		if errors.Is(err, syscall.ENOENT) {
			err = nil
		}
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}
