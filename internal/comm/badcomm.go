package comm

import "github.com/collio/collio/internal/ioerr"

// badComm is what World.Comm returns for a rank outside the world: every
// call fails instead of panicking.
type badComm struct{ rank, size int }

func (b badComm) err() error {
	return ioerr.New(ioerr.ErrArg, "comm", "rank %d is outside the world of %d ranks", b.rank, b.size)
}

func (b badComm) Rank() int                                                  { return b.rank }
func (b badComm) Size() int                                                  { return b.size }
func (b badComm) Barrier() error                                             { return b.err() }
func (b badComm) Bcast([]byte, int) error                                    { return b.err() }
func (b badComm) Allgather(_, _ []byte) error                                { return b.err() }
func (b badComm) Allgatherv(_, _ []byte, _, _ []int) error                   { return b.err() }
func (b badComm) Alltoall(_, _ []byte, _ int) error                          { return b.err() }
func (b badComm) AllreduceInt64(_, _ []int64, _ Op) error                    { return b.err() }
func (b badComm) Isend([]byte, int, int) (Request, error)                    { return nil, b.err() }
func (b badComm) Issend([]byte, int, int) (Request, error)                   { return nil, b.err() }
func (b badComm) Irecv([]byte, int, int) (Request, error)                    { return nil, b.err() }
func (b badComm) Iallgather(_, _ []byte) (Request, error)                    { return nil, b.err() }
func (b badComm) Split(int, int) (Comm, error)                               { return nil, b.err() }
func (b badComm) SplitNode() (Comm, error)                                   { return nil, b.err() }
func (b badComm) Dup() (Comm, error)                                         { return nil, b.err() }
func (b badComm) Free() error                                                { return b.err() }
func (b badComm) Alltoallv(_ []byte, _, _ []int, _ []byte, _, _ []int) error { return b.err() }
