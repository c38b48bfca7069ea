// Package independent is the collective strategy that does not aggregate:
// every rank does its own part with the file object's independent I/O
// (data sieving, byte-range locks where needed), as ROMIO does when
// collective buffering is disabled. The file object decides when it pays
// (its automatic table), so the strategy never bids.
package independent

import (
	"errors"
	"time"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/metrics"
)

func init() {
	coll.Register(coll.Registration{Name: hints.StrategyIndependent, New: newStrategy, Aggregators: notAggregating})
}

func newStrategy(coll.Setting) coll.Strategy { return Strategy{} }

func notAggregating(coll.Situation) coll.AggregatorRule { return coll.NotAggregating }

// Strategy runs each rank's part through Job.Independent.
type Strategy struct{}

// errNoFileObject: the strategy needs the file object's own I/O.
var errNoFileObject = errors.New("independent: the job has no file object's independent I/O")

// Write writes this rank's access with independent I/O.
func (Strategy) Write(j *coll.Job) error {
	if j.Independent == nil {
		return errNoFileObject
	}
	defer timeIO(j.Stats)()
	return j.Independent.WriteIndependent()
}

// Read reads this rank's access with independent I/O.
func (Strategy) Read(j *coll.Job) (int64, error) {
	if j.Independent == nil {
		return 0, errNoFileObject
	}
	defer timeIO(j.Stats)()
	return j.Independent.ReadIndependent()
}

// timeIO records the time until the returned function is called as the
// call's IO and IOWait: all of it is file I/O (sieving reads included),
// and none is hidden behind an exchange.
func timeIO(st *metrics.Call) func() {
	start := time.Now()
	return func() {
		if st != nil {
			d := time.Since(start)
			st.IO += d
			st.IOWait += d
		}
	}
}
