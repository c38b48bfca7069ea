package main

// #include "shim.h"
import "C"

import (
	"time"
	"unsafe"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

// The fast lane (lane.c, adio.Lane): after a collective transfer with an
// explicit offset that went through Go, the same calls that would follow
// it (independent I/O without communication, one system call each) are
// served in C until Go must see one (a recheck point, another datatype,
// an error) or Go is entered for anything else on the file; likewise
// independent reads with explicit offsets (adio.File.ReadLane).

// laneEnabled is COLLIO_FAST_LANE (on by default), read once, as
// collio_lane_enabled reads it for C.
var laneEnabled = envSwitch(envvar.FastLane)

// armLane hands the next calls of a direction to C when adio says they
// may be served there and the datatype is one C can recognise: a
// predefined one (never freed, so its handle never means another type)
// whose data is contiguous from its start.
func (f *file) armLane(kind int, dt unsafe.Pointer, t *layout.Type) {
	if !laneEnabled || t == nil || t.Size() == 0 || !t.IsContiguous() || t.LB() != 0 || t.Extent() != t.Size() ||
		C.collio_type_is_named(C.MPI_Datatype(dt)) == 0 {
		return
	}
	var l adio.Lane
	var ok bool
	switch kind {
	case C.COLLIO_LANE_READ_ALL, C.COLLIO_LANE_WRITE_ALL:
		l, ok = f.f.Lane(kind == C.COLLIO_LANE_WRITE_ALL)
	case C.COLLIO_LANE_READ:
		l, ok = f.f.ReadLane()
	}
	if !ok {
		return
	}
	C.collio_lane_arm(C.uintptr_t(f.h), C.int(kind), C.int(l.FD), C.longlong(l.Base), C.longlong(l.EtypeSize), C.longlong(l.Calls),
		C.MPI_Datatype(dt), C.longlong(t.Size()))
	f.laneArmed = true
}

// takeLane disarms the lane and records what it served, in adio and in
// the file's statistics, as if those calls had come through Go.
func (f *file) takeLane() {
	if !f.laneArmed {
		return
	}
	f.laneArmed = false
	var got [C.COLLIO_LANES]C.struct_collio_lane_calls
	C.collio_lane_take(C.uintptr_t(f.h), &got[0])
	for kind, c := range got {
		if c.calls == 0 {
			continue
		}
		if kind == C.COLLIO_LANE_READ {
			f.stats.counters.AddIndependentCalls(false, int64(c.calls), int64(c.moved), int64(c.pieces), time.Duration(c.ns))
			continue
		}
		write := kind == C.COLLIO_LANE_WRITE_ALL
		sum := f.f.AddLaneCalls(write, adio.LaneCalls{Calls: int64(c.calls), Bytes: int64(c.bytes), Time: time.Duration(c.ns),
			LastBytes: int64(c.last_bytes), LastTime: time.Duration(c.last_ns)})
		f.stats.addLaneCalls(sum, int64(c.calls), int64(c.pieces))
	}
}

// addLaneCalls counts calls the lane served, with sum their metrics.
func (s *fileStats) addLaneCalls(sum metrics.Call, calls, pieces int64) {
	s.counters.AddCollectiveCalls(sum, calls, pieces)
	if s.rank == 0 && s.reporting() {
		s.strategies.AddCalls(s.seq+1, calls, sum)
	}
	s.seq += calls
}
