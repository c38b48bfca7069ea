package comm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/collio/collio/internal/ioerr"
)

// A bad argument on one rank (rank 1) must give every rank an error of
// the given class, not a hang, and leave the communicator usable.
func TestCollectiveArgumentErrors(t *testing.T) {
	const n = 3
	ok3 := []int{1, 1, 1}
	at := []int{0, 1, 2}
	cases := []struct {
		name  string
		class *ioerr.Class
		call  func(c Comm, bad bool) error
	}{
		{"bcast root out of range", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Bcast(make([]byte, 2), pick(bad, n, 0))
		}},
		{"bcast root differs", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			return c.Bcast(make([]byte, 2), pick(bad, 2, 0))
		}},
		{"bcast length differs from root", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			return c.Bcast(make([]byte, pick(bad, 3, 2)), 0)
		}},
		{"allgather recv length", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Allgather(make([]byte, 2), make([]byte, pick(bad, 5, 6)))
		}},
		{"allgather send lengths differ", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			m := pick(bad, 3, 2)
			return c.Allgather(make([]byte, m), make([]byte, n*m))
		}},
		{"allgatherv displacement out of range", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Allgatherv(make([]byte, 1), make([]byte, 3), ok3, []int{0, 1, pick(bad, 3, 2)})
		}},
		{"allgatherv count differs from send", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Allgatherv(make([]byte, pick(bad, 2, 1)), make([]byte, 3), ok3, at)
		}},
		{"allgatherv counts differ between ranks", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			counts, displs := ok3, at
			if bad {
				counts, displs = []int{2, 1, 1}, []int{0, 2, 3} // expects 2 bytes from rank 0
			}
			return c.Allgatherv(make([]byte, 1), make([]byte, 4), counts, displs)
		}},
		{"allgatherv short counts", ioerr.ErrArg, func(c Comm, bad bool) error {
			counts := ok3
			if bad {
				counts = ok3[:2]
			}
			return c.Allgatherv(make([]byte, 1), make([]byte, 3), counts, at)
		}},
		{"alltoall buffer length", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Alltoall(make([]byte, 6), make([]byte, pick(bad, 5, 6)), 2)
		}},
		{"alltoall negative block", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Alltoall(nil, nil, pick(bad, -1, 0))
		}},
		{"alltoall block sizes differ", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			m := pick(bad, 1, 2)
			return c.Alltoall(make([]byte, n*m), make([]byte, n*m), m)
		}},
		{"alltoallv negative count", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Alltoallv(make([]byte, 3), []int{1, pick(bad, -1, 1), 1}, at, make([]byte, 3), ok3, at)
		}},
		{"alltoallv receive block past end", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.Alltoallv(make([]byte, 3), ok3, at, make([]byte, pick(bad, 2, 3)), ok3, at)
		}},
		{"alltoallv counts disagree", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			return c.Alltoallv(make([]byte, 3), ok3, at, make([]byte, 6), []int{1, 1, pick(bad, 2, 1)}, at)
		}},
		{"allreduce lengths differ within a rank", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.AllreduceInt64(make([]int64, 2), make([]int64, pick(bad, 1, 2)), OpSum)
		}},
		{"allreduce unknown op", ioerr.ErrArg, func(c Comm, bad bool) error {
			return c.AllreduceInt64(make([]int64, 2), make([]int64, 2), Op(pick(bad, 9, 0)))
		}},
		{"allreduce lengths differ between ranks", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			m := pick(bad, 3, 2)
			return c.AllreduceInt64(make([]int64, m), make([]int64, m), OpSum)
		}},
		{"allreduce ops differ", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			return c.AllreduceInt64(make([]int64, 1), make([]int64, 1), Op(pick(bad, int(OpMax), int(OpSum))))
		}},
		{"different collectives", ioerr.ErrNotSame, func(c Comm, bad bool) error {
			if bad {
				return c.Bcast(make([]byte, 1), 0)
			}
			return c.Barrier()
		}},
		{"iallgather recv length", ioerr.ErrArg, func(c Comm, bad bool) error {
			return recvWait(c.Iallgather(make([]byte, 1), make([]byte, pick(bad, 2, 3))))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runRanks(t, n, 0, func(c Comm) error {
				err := tc.call(c, c.Rank() == 1)
				if !errors.Is(err, tc.class) {
					return fmt.Errorf("got %v, want class %q", err, tc.class.Name())
				}
				if c.Rank() == 0 {
					t.Logf("%v", err)
				}
				// Every rank took part, so the next collective lines up.
				return c.Barrier()
			})
		})
	}
}

func pick(bad bool, ifBad, otherwise int) int {
	if bad {
		return ifBad
	}
	return otherwise
}
