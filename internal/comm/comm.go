// Package comm defines the communicator interface that every layer of
// collio above the MPI binding talks to. Two implementations exist: one over
// the host MPI (type mpi.Comm in package internal/mpi) and one in memory, where ranks
// are goroutines of one process grouped into virtual nodes (NewWorld).
//
// Buffers are byte slices. Counts and displacements are in bytes.
package comm

import "errors"

// Op is a reduction operation for Allreduce.
type Op int

const (
	OpSum Op = iota
	OpMax
	OpMin
)

// AnySource may be passed as the source of Irecv.
const AnySource = -1

// Comm is a communicator: a group of ranks that can exchange messages.
//
// All collective calls must be made by every rank of the communicator in
// the same order. Implementations are safe for use by several goroutines of
// one rank only where noted (point-to-point calls); collectives are issued by
// one goroutine per rank at a time.
type Comm interface {
	Rank() int
	Size() int

	// Barrier blocks until every rank has entered it.
	Barrier() error
	// Bcast copies root's buf into buf on every other rank. len(buf) must be
	// equal on all ranks.
	Bcast(buf []byte, root int) error
	// Allgather concatenates every rank's send (all of equal length) into
	// recv, in rank order. len(recv) == Size()*len(send).
	Allgather(send, recv []byte) error
	// Allgatherv: rank r contributes counts[r] bytes, placed at displs[r] in recv.
	Allgatherv(send, recv []byte, counts, displs []int) error
	// Alltoall sends n bytes to each rank: block i of send goes to rank i,
	// block j of recv comes from rank j. len(send) == len(recv) == Size()*n.
	Alltoall(send, recv []byte, n int) error
	// Alltoallv sends scounts[i] bytes at sdispls[i] to rank i and receives
	// rcounts[j] bytes at rdispls[j] from rank j.
	Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error
	// AllreduceInt64 reduces in element-wise over all ranks into out
	// (len(out) == len(in); in and out may be the same slice).
	AllreduceInt64(in, out []int64, op Op) error

	// Isend starts a standard-mode send. The buffer must not be modified
	// until the request completes.
	Isend(buf []byte, dest, tag int) (Request, error)
	// Issend starts a synchronous send: it completes only once the matching
	// receive has started.
	Issend(buf []byte, dest, tag int) (Request, error)
	// Irecv starts a receive of at most len(buf) bytes. A longer message is
	// an error reported when the request completes.
	Irecv(buf []byte, src, tag int) (Request, error)
	// Iallgather is the nonblocking Allgather, used to agree on outcomes
	// with a deadline (Test polled in a loop) so a stuck rank cannot hang
	// the others.
	Iallgather(send, recv []byte) (Request, error)

	// Split partitions the ranks by color (ranks with equal color form one
	// new communicator), ordered by key then old rank. Negative color means
	// "not in any new communicator": the result is nil.
	Split(color, key int) (Comm, error)
	// SplitNode returns the communicator of the ranks sharing this rank's
	// node (MPI_COMM_TYPE_SHARED, or the virtual node of the in-memory world).
	SplitNode() (Comm, error)
	// Dup returns a new communicator with the same group, whose messages
	// never match those of the original.
	Dup() (Comm, error)
	// Free releases a communicator made by Split, SplitNode or Dup.
	Free() error
}

// Request is a pending nonblocking operation.
type Request interface {
	// Wait blocks until the operation completes and returns its error.
	Wait() error
	// Test reports whether the operation has completed, without blocking.
	// Once it reports true, the returned error is the operation's outcome.
	Test() (bool, error)
	// Count is the number of bytes transferred, valid after completion
	// (useful for receives of unknown length).
	Count() int
}

// Waitall waits for every request and returns the first error.
func Waitall(reqs ...Request) error {
	var first error
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ErrTruncate is reported by a receive whose message is longer than its buffer.
var ErrTruncate = errors.New("comm: message longer than receive buffer")

// As finds the first communicator in c's chain of wrappers (each
// wrapper's Unwrap gives the next) that implements T, as errors.As does
// for errors: how layers reach a capability a wrapper may hide.
func As[T any](c Comm) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ Unwrap() Comm })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	var zero T
	return zero, false
}
