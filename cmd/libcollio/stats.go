//go:build cgo

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

// Per-file metrics. Every rank counts its calls on each open file
// (metrics.FileCounters: collective calls from adio's record of each call,
// independent ones timed here), for collio_file_stats and the reports.
// With COLLIO_STATS set at open, MPI_File_close gathers the counters to
// every rank in one fixed-size Allgather (about 600 bytes per rank) before
// the file is closed, and rank 0 prints the report: COLLIO_STATS=1 as text
// on stderr, COLLIO_STATS=path as one line of JSON appended to path (JSON
// Lines; "%p" in path becomes rank 0's process id, "%%" a percent sign).
// Unset, 0 or empty: no report, and close has no extra collective.

// fileStats is one rank's account of one open file.
type fileStats struct {
	dest       string // "": no report; "1": text on stderr; else a path template
	opened     time.Time
	counters   metrics.FileCounters
	strategies metrics.Strategies // kept on rank 0 only
	last       metrics.Call       // the last collective call that succeeded
	seq        int64              // collective calls so far
	rank       int
	// timedOut: a collective call timed out (collio_collective_timeout),
	// so a rank may never reach close, and the gathering is skipped.
	timedOut bool
}

// newFileStats reads COLLIO_STATS (whether to report at close). The open
// has checked the value (envvar.Check).
func newFileStats(rank int, opened time.Time) *fileStats {
	dest, _ := envvar.StatsDest(getenv(envvar.Stats))
	return &fileStats{dest: dest, opened: opened, rank: rank}
}

// reporting tells whether close gathers and reports the counters.
func (s *fileStats) reporting() bool { return s.dest != "" }

// callStart is what a transfer notes before it runs, for its record.
type callStart struct {
	at     time.Time
	view   adio.View
	offset int64 // etypes, where the view starts the transfer (-1: not known yet)
}

// begin notes the start time, the view and offset (etypes; -1 for shared
// and ordered calls, whose offset is known later: file.xoff).
func (s *fileStats) begin(f *file, offset int64, collective bool) callStart {
	cs := callStart{view: f.f.View(), offset: offset}
	if !collective {
		cs.at = time.Now() // a collective call's time comes from its metrics
	}
	return cs
}

// end records a transfer that began with cs. offset is where shared and
// ordered calls started (-1: unknown); requested is the access size.
func (s *fileStats) end(f *file, cs callStart, collective, read bool, offset, requested, n int64, err error) {
	if cs.offset >= 0 {
		offset = cs.offset
	}
	pieces := int64(0)
	if offset >= 0 {
		pieces = layout.PiecesOf(cs.view.Filetype, offset*cs.view.Etype.Size(), requested)
	} else if requested > 0 {
		pieces = layout.PiecesOf(cs.view.Filetype, 0, requested)
	}
	if !collective {
		s.counters.AddIndependent(!read, n, pieces, time.Since(cs.at), err != nil)
		return
	}
	s.seq++
	if err != nil {
		s.timedOut = s.timedOut || errors.Is(err, ioerr.ErrTimeout)
		s.counters.AddFailedCollective(!read)
		return
	}
	last := f.f.LastCall()
	s.counters.AddCollective(last, pieces)
	s.last = last
	if s.rank == 0 && s.reporting() {
		s.strategies.Add(s.seq, last)
	}
}

// gather collects every rank's counters (index = rank) on every rank
// (collective), with the time since open.
func (f *file) gather() ([]metrics.FileCounters, error) {
	s := f.stats
	s.counters.Open = time.Since(s.opened)
	c := f.comm
	mine := s.counters.Encode()
	all := make([]byte, len(mine)*c.Size())
	if err := c.Allgather(mine, all); err != nil {
		return nil, fmt.Errorf("gathering the ranks' counters failed: %v", err)
	}
	ranks := make([]metrics.FileCounters, c.Size())
	for r := range ranks {
		var err error
		if ranks[r], err = metrics.DecodeFileCounters(all[r*len(mine) : (r+1)*len(mine)]); err != nil {
			return nil, err
		}
	}
	return ranks, nil
}

// report gathers every rank's counters and has rank 0 print or append
// the file's report. It is collective (close calls it on every rank).
func (f *file) report() {
	s := f.stats
	if s.timedOut {
		// Every rank that reaches close timed out too (the entry of a
		// collective call has a deadline on every rank), so all skip.
		fmt.Fprintf(os.Stderr, "collio[%d]: COLLIO_STATS: no report for %s: a collective call timed out\n", worldRank(), f.path)
		return
	}
	ranks, err := f.gather()
	if f.comm.Rank() != 0 {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "collio: COLLIO_STATS: no report for %s: %v\n", f.path, err)
		return
	}
	rep := metrics.Aggregate(f.path, absPath(f.path), ranks, s.strategies.Groups)
	rep.Closed = time.Now().Format(time.RFC3339)
	if err := writeReport(&rep, s.dest); err != nil {
		fmt.Fprintf(os.Stderr, "collio: COLLIO_STATS: %v\n", err)
	}
}

// writeReport prints rep on stderr (dest "1") or appends it as one JSON
// line to the file dest names.
func writeReport(rep *metrics.FileReport, dest string) error {
	if dest == "1" {
		return rep.Text(os.Stderr)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	name := statsPath(dest, os.Getpid())
	out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("cannot write the report of %s: %v", rep.Path, err)
	}
	// One write per report: appends from several processes do not mix.
	_, err = out.Write(append(line, '\n'))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the report of %s to %s: %v", rep.Path, name, err)
	}
	return nil
}

// statsPath expands %p (the process id) and %% in a COLLIO_STATS path.
func statsPath(tmpl string, pid int) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' || i+1 == len(tmpl) {
			b.WriteByte(tmpl[i])
			continue
		}
		switch tmpl[i+1] {
		case 'p':
			b.WriteString(strconv.Itoa(pid))
			i++
		case '%':
			b.WriteByte('%')
			i++
		default:
			b.WriteByte('%')
		}
	}
	return b.String()
}
