package ioserver

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/topo"
)

// Compute is the communicator of the compute ranks, carrying their
// session with the servers: files opened on it go through the servers.
type Compute struct {
	comm.Comm
	s *Session
}

// Unwrap is the plain compute communicator.
func (c *Compute) Unwrap() comm.Comm { return c.Comm }

// IOServers is the session with the servers.
func (c *Compute) IOServers() *Session { return c.s }

// Provider is what a communicator from Split offers through any chain of
// wrappers (comm.As).
type Provider interface{ IOServers() *Session }

// SessionOf finds the server session of a communicator from Split.
func SessionOf(c comm.Comm) (*Session, bool) {
	p, ok := comm.As[Provider](c)
	if !ok {
		return nil, false
	}
	return p.IOServers(), true
}

// Split makes n ranks of c I/O servers, spread over the nodes (collective
// on c). On compute ranks it returns their communicator, a *Compute; on
// server ranks it serves until the compute ranks call Stop, then returns
// nil. n == 0 returns c unchanged.
func Split(c comm.Comm, n int, cfg Config) (comm.Comm, error) {
	if c == nil {
		return nil, fmt.Errorf("ioserver: no communicator")
	}
	if n == 0 {
		return c, nil
	}
	if n < 0 || n >= c.Size() {
		return nil, fmt.Errorf("ioserver: %d I/O server ranks of %d leave no compute rank", n, c.Size())
	}
	nodes, err := topo.Discover(c, 0)
	if err != nil {
		return nil, err
	}
	servers := PickServers(nodes, n)
	dup, err := c.Dup()
	if err != nil {
		return nil, err
	}
	serving := slices.Contains(servers, c.Rank())
	color := 0
	if serving {
		color = -1
	}
	compute, err := c.Split(color, c.Rank())
	if err != nil {
		dup.Free()
		return nil, err
	}
	if serving {
		err := Serve(dup, cfg)
		if ferr := dup.Free(); err == nil {
			err = ferr
		}
		return nil, err
	}
	cp := &Compute{Comm: compute, s: NewSession(dup, servers)}
	live.Lock()
	live.list = append(live.list, cp)
	live.Unlock()
	return cp, nil
}

// live lists the compute communicators whose servers still run, in the
// order of their splits (the same on every rank), for StopAll.
var live struct {
	sync.Mutex
	list []*Compute
}

// forget removes s from live and reports whether it was there.
func forget(s *Session) bool {
	live.Lock()
	defer live.Unlock()
	for i, cp := range live.list {
		if cp.s == s {
			live.list = slices.Delete(live.list, i, i+1)
			return true
		}
	}
	return false
}

// StopAll stops the servers of every compute communicator of this process
// not stopped yet, in the order of their splits: what finalising does, so
// that server ranks return even if the program never called Stop. It is
// collective over each of those compute communicators.
func StopAll() error {
	live.Lock()
	list := slices.Clone(live.list)
	live.Unlock()
	var first error
	for _, cp := range list {
		if err := Stop(cp); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SplitHints is Split with the count and the buffer from hints: n > 0 is
// the count; n == 0 takes collio_io_servers from h, else from
// COLLIO_IO_SERVERS (a count or a percentage); collio_io_server_buffer (or
// COLLIO_IO_SERVER_BUFFER) is the buffer. Errors name the hint and the value.
func SplitHints(c comm.Comm, n int, h map[string]string) (comm.Comm, error) {
	if c == nil {
		return nil, ioerr.New(ioerr.ErrArg, "split_io_servers", "communicator is nil")
	}
	if n < 0 {
		return nil, ioerr.New(ioerr.ErrArg, "split_io_servers", "negative number of I/O servers %d", n)
	}
	merged := map[string]string{}
	for k, env := range map[string]string{hints.CollioIOServers: hints.EnvIOServers, hints.CollioIOServerBuffer: hints.EnvIOServerBuffer} {
		if v := os.Getenv(env); v != "" {
			merged[k] = v
		}
	}
	maps.Copy(merged, h)
	set, err := hints.Resolve(merged, hints.Options{})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		key := hints.CollioIOServers
		if n, err = ParseCount(key, set.String(key), c.Size()); err != nil {
			return nil, ioerr.New(ioerr.ErrBadHint, "split_io_servers", "%v", err)
		}
	}
	if n >= c.Size() {
		return nil, ioerr.New(ioerr.ErrArg, "split_io_servers", "%d I/O servers of %d ranks leave no compute rank", n, c.Size())
	}
	return Split(c, n, Config{Buffer: set.Int(hints.CollioIOServerBuffer)})
}

// Stop ends the servers (collective on the compute communicator from
// Split): once every compute rank has called it, rank 0 asks each server
// to stop, and every compute rank returns the same error, the first of the
// files the servers still held open.
func Stop(c comm.Comm) error {
	s, ok := SessionOf(c)
	if !ok {
		return fmt.Errorf("ioserver: the communicator has no I/O servers (not from Split)")
	}
	if !forget(s) {
		return fmt.Errorf("ioserver: the I/O servers of this communicator were stopped already")
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	var err error
	if c.Rank() == 0 {
		err = s.Stop()
	}
	err = agree.Errors(c, err)
	if ferr := s.c.Free(); err == nil && ferr != nil {
		err = ferr
	}
	return err
}
