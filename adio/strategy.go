package adio

import (
	"fmt"
	"slices"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/segment"
	"github.com/collio/collio/twophase"
)

// overlap reports whether collio_overlap is on.
func (f *File) overlap() bool { return f.hints.Enum(hints.CollioOverlap) == hints.Enable }

// A strategy runs one rank's part of a collective transfer. The caller
// has already checked the arguments on every rank and gathered every
// rank's access range; it agrees on the error afterwards.
type strategy interface {
	write(c *call) error
	read(c *call) (int64, error)
}

// strategies is the registry: collio_strategy values that are available.
var strategies = map[string]strategy{
	hints.StrategyIndependent: independent{},
	hints.StrategyTwoPhase:    twoPhase{},
	hints.StrategyDynamic:     segmented{dynamic: true},
	hints.StrategyStatic:      segmented{dynamic: false},
}

// Available returns the names of the strategies that can be chosen.
func Available() []string {
	var names []string
	for n := range strategies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// chooseStrategy is the selection table. An explicit collio_strategy
// wins; otherwise ROMIO's romio_cb_write / romio_cb_read decide:
// disable → independent I/O, enable → two-phase, automatic → two-phase
// when the ranks' access ranges interleave (ROMIO's test), independent
// otherwise. romio_no_indep_rw forces collective buffering. It is pure:
// every rank, holding the same hints and ranges, makes the same choice.
func chooseStrategy(h *hints.Set, write bool, ranges []twophase.Range) (name, reason string, err error) {
	if s := h.Enum(hints.CollioStrategy); s != hints.StrategyAuto {
		if _, ok := strategies[s]; !ok {
			return "", "", ioerr.New(ioerr.ErrUnsupported, "",
				"collio_strategy=%s is not available yet; available: auto, %v", s, Available())
		}
		return s, "collio_strategy=" + s, nil
	}
	key := hints.RomioCBRead
	if write {
		key = hints.RomioCBWrite
	}
	cb := h.Enum(key)
	switch {
	case h.Bool(hints.RomioNoIndepRW):
		return hints.StrategyTwoPhase, "romio_no_indep_rw=true", nil
	case cb == hints.Disable:
		return hints.StrategyIndependent, key + "=disable", nil
	case cb == hints.Enable:
		return hints.StrategyTwoPhase, key + "=enable", nil
	case twophase.Interleaved(ranges):
		return hints.StrategyTwoPhase, "accesses interleave", nil
	}
	return hints.StrategyIndependent, "no interleaving between ranks", nil
}

// call is one collective transfer on one rank.
type call struct {
	f      *File
	op     string
	view   View
	access Access
	off    int64 // etypes
	ranges []twophase.Range
}

// independent: every rank does its own part with independent I/O (with
// data sieving), as ROMIO does when collective buffering is off.
type independent struct{}

func (independent) write(c *call) error {
	_, err := c.f.writeAt(c.op, c.view, c.access, c.off)
	return err
}

func (independent) read(c *call) (int64, error) {
	return c.f.readAt(c.op, c.view, c.access, c.off)
}

// twoPhase: ROMIO's extended two-phase collective buffering.
type twoPhase struct{}

func (twoPhase) job(c *call, write bool) *twophase.Job {
	f := c.f
	a := c.access
	stripe := f.hints.Int(hints.StripingUnit) // as reported by the file system, else as asked
	stripeCount := 0
	switch f.hints.Enum(hints.CollioFileDomains) {
	case hints.DomainsAuto:
		if f.layout.StripeSize > 0 && f.layout.StripeCount > 0 {
			stripeCount = f.layout.StripeCount
		}
	case hints.DomainsCyclic:
		stripeCount = max(f.layout.StripeCount, int(f.hints.Int(hints.StripingFactor)), 1)
	case hints.DomainsEven:
		stripe = 0
	}
	coRatio := 1 // ROMIO uses the ratio for writes only
	if write {
		coRatio = int(f.hints.Int(hints.RomioLustreCoRatio))
	}
	return &twophase.Job{
		Comm:        f.comm,
		File:        f.f,
		Aggregators: f.aggs,
		Ranges:      c.ranges,
		Access: twophase.Access{
			Buf: a.Buf, MemType: a.MemType, Count: a.Count,
			Disp: c.view.Disp, Filetype: c.view.Filetype,
			DataStart: c.off * c.view.Etype.Size(), Size: a.Size(),
		},
		BufSize:     f.hints.Int(hints.CBBufferSize),
		MinDomain:   f.hints.Int(hints.RomioMinFdomainSize),
		Stripe:      stripe,
		StripeCount: stripeCount,
		CoRatio:     coRatio,
		RMW:         f.dsWriteOK && f.hints.Enum(hints.RomioDSWrite) != hints.Disable,
		Atomic:      f.Atomicity(),
		Overlap:     f.hints.Enum(hints.CollioOverlap) == hints.Enable,
		Buffers:     &f.buffers,
		Stats:       &f.last,
	}
}

// Only aggregators touch the file, so ranks that deferred their open
// (romio_no_indep_rw) take part without opening it.
func (t twoPhase) write(c *call) error { return twophase.Write(t.job(c, true)) }

func (t twoPhase) read(c *call) (int64, error) { return twophase.Read(t.job(c, false)) }

// describe is used in messages.
func (c *call) String() string { return fmt.Sprintf("%s at offset %d", c.op, c.off) }

// segmented: OMPIO's dynamic or static segmentation (package segment):
// aggregators serve groups of ranks rather than file domains.
type segmented struct{ dynamic bool }

func (s segmented) write(c *call) error {
	return segment.Write(twoPhase{}.job(c, true), s.dynamic, c.f.overlap())
}

func (s segmented) read(c *call) (int64, error) {
	return segment.Read(twoPhase{}.job(c, false), s.dynamic, c.f.overlap())
}
