package coll

import (
	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/topo"
)

// Strategy carries out collective transfers on one open file. It is made
// by its registration's New from the file's Setting and kept while the
// file's hints stay the same, so it parses the hints it needs once.
type Strategy interface {
	// Write runs this rank's part of a collective write. Every rank of
	// j.Comm calls it with the same Aggregators, Ranges and BufSize. It
	// returns this rank's error; a file error never stops the exchange, so
	// no peer hangs, and the caller agrees on the outcome afterwards.
	Write(j *Job) error
	// Read runs this rank's part of a collective read, as Write, and
	// returns the bytes read: fewer than the access size only where the
	// access extends past end of file.
	Read(j *Job) (int64, error)
}

// Setting is what a strategy is made from: the open file's hints and
// what the file system and the ranks' placement say about it. It holds
// for every call until the hints change.
type Setting struct {
	Hints  *hints.Set
	Layout driver.Layout // striping, as the file system reports it
	Nodes  topo.Nodes    // which node each rank runs on
}

// Striped reports whether the file system stripes the file.
func (s Setting) Striped() bool { return s.Layout.StripeSize > 0 && s.Layout.StripeCount > 0 }

// Situation is what the automatic choice looks at for one call. Every
// rank holds the same one (from hints, layout and the call's entry
// record), so bids made from it agree everywhere without a message.
type Situation struct {
	Write   bool
	Ranges  []Range // every rank's file range in this call
	Nodes   int     // nodes the ranks run on
	Striped bool    // the file system reports striping
	Sieve   bool    // independent I/O of this direction may use data sieving
	Bytes   int64   // data all ranks move in the call
	Pieces  int64   // file pieces all ranks access (estimated; 0: unknown)
}

// SmallPiece: calls whose pieces average fewer bytes are dominated by the
// cost per piece (E3SM's flushes: about 16 bytes a piece). Two-phase
// merges such pieces at the aggregators into large writes; segmentation
// with a group per rank would write them one system call each.
const SmallPiece = 4 << 10

// SmallPieces reports whether the call's pieces average under SmallPiece.
func (s Situation) SmallPieces() bool {
	return s.Pieces > 0 && s.Bytes < SmallPiece*s.Pieces
}

// MeanPiece is the call's bytes per piece (0 when unknown).
func (s Situation) MeanPiece() int64 {
	if s.Pieces <= 0 {
		return 0
	}
	return s.Bytes / s.Pieces
}

// Bid is a strategy's say in the automatic choice for one call: how well
// it suits the situation, and why. Priorities of all strategies are on
// one scale (docs/strategies.md lists them); 0 is no bid. A struct, so
// that a choice that measures can be given more than a number.
type Bid struct {
	Priority int
	Reason   string // shown with the choice in Stats and COLLIO_STATS
}

// AggregatorRule is which ranks aggregate a call when collio picks them
// (collio_auto_aggregators, and neither cb_nodes nor cb_config_list). On
// a striped file system every rule but NotAggregating gets stripe count ×
// romio_lustre_co_ratio aggregators instead, as ROMIO-TAM and GIO do.
type AggregatorRule int

const (
	// OpenAggregators: those chosen at open (ROMIO's: one per node).
	OpenAggregators AggregatorRule = iota
	// EveryRank: every rank, in node round-robin order.
	EveryRank
	// ByVolume: the open-time aggregators, one per collio_bytes_per_agg
	// bytes the call moves (OMPIO's bytes_per_agg rule; all when unset).
	ByVolume
	// NotAggregating: the strategy has no aggregators (independent I/O);
	// the open-time list is passed on unused.
	NotAggregating
)

// OwnBlocksReporter is a strategy that plans from every rank's OwnBlocks
// report, which the call's entry record (the Allgather every collective
// call begins with) carries to all ranks as Job.Own.
type OwnBlocksReporter interface {
	// ReportsOwnBlocks reports whether ranks report at all with this
	// file's setting (the same answer on every rank).
	ReportsOwnBlocks() bool
	// OwnBlocks is this rank's report on its file side a.
	OwnBlocks(a Access) OwnBlocks
}

// IndependentIO is the file object's own I/O of one rank's access: data
// sieving, with byte-range locks where another rank's sieving window
// could cover the bytes. The independent strategy is nothing else; other
// strategies may fall back on it.
type IndependentIO interface {
	WriteIndependent() error
	ReadIndependent() (int64, error)
}
