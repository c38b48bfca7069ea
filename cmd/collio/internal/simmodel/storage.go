package simmodel

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/collio/collio/driver/sim"
)

// Write is one file write an aggregator issued.
type Write struct{ Off, N int64 }

// Storage models the write phase on the sim driver's file system:
// writes[a] are aggregator a's writes in the order it issued them. Every
// aggregator starts at time 0 and issues its next write when the previous
// one completes (a blocking write, as the strategies' aggregators do);
// the aggregators' requests are booked on one sim.Timeline in the order
// of their issue times (ties by aggregator), so they queue on the storage
// targets and take stripe locks from each other as sim files would. The
// result is when the last write completes.
func Storage(p sim.Params, writes [][]Write) (time.Duration, error) {
	tl, err := sim.NewTimeline(p)
	if err != nil {
		return 0, err
	}
	q := make(issueQueue, 0, len(writes))
	for a, ws := range writes {
		for i, w := range ws {
			if w.Off < 0 || w.N < 0 {
				return 0, fmt.Errorf("simmodel: aggregator %d's write %d at %d of %d bytes", a, i, w.Off, w.N)
			}
		}
		if len(ws) > 0 {
			q = append(q, issue{agg: a})
		}
	}
	heap.Init(&q)
	var end int64
	for len(q) > 0 {
		it := &q[0]
		w := writes[it.agg][it.next]
		done, _ := tl.Book(it.at, int64(it.agg)+1, w.Off, w.N, true)
		end = max(end, done)
		it.at, it.next = done, it.next+1
		if it.next == len(writes[it.agg]) {
			heap.Pop(&q)
		} else {
			heap.Fix(&q, 0)
		}
	}
	return time.Duration(end), nil
}

// issue is an aggregator's next write and when it is issued.
type issue struct {
	at        int64
	agg, next int
}

type issueQueue []issue

func (q issueQueue) Len() int { return len(q) }
func (q issueQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].agg < q[j].agg
}
func (q issueQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *issueQueue) Push(x any)   { *q = append(*q, x.(issue)) }
func (q *issueQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
