package comm

// The blocking collectives of the in-memory communicator. Each validates
// its own arguments (a bad argument is deposited, not returned at once, so
// every rank gets the error instead of the others hanging), then lets the
// rendezvous do the rest; the closure is this rank's share of the copying.

func (c *memComm) Barrier() error {
	return c.collective("Barrier", deposit{kind: kindBarrier}, func(*collOp) error { return nil })
}

func (c *memComm) Bcast(buf []byte, root int) error {
	d := deposit{kind: kindBcast, root: root, send: buf}
	if root < 0 || root >= c.Size() {
		d.err = argError("bcast", c.rank, "root %d out of range [0,%d)", root, c.Size())
	}
	return c.collective("Bcast", d, func(op *collOp) error {
		if c.rank != root {
			copy(buf, op.deps[root].send)
		}
		return nil
	})
}

func (c *memComm) Allgather(send, recv []byte) error {
	d := deposit{kind: kindAllgather, send: send}
	d.err = checkGatherLen("allgather", c.rank, c.Size(), send, recv)
	return c.collective("Allgather", d, gatherShare(recv))
}

func checkGatherLen(op string, rank, size int, send, recv []byte) error {
	if len(recv) != size*len(send) {
		return argError(op, rank, "receive buffer is %d bytes, want %d ranks x %d bytes = %d",
			len(recv), size, len(send), size*len(send))
	}
	return nil
}

// gatherShare copies every rank's send block into recv in rank order.
func gatherShare(recv []byte) func(*collOp) error {
	return func(op *collOp) error {
		m := len(op.deps[0].send)
		for j := range op.deps {
			copy(recv[j*m:(j+1)*m], op.deps[j].send)
		}
		return nil
	}
}

func (c *memComm) Allgatherv(send, recv []byte, counts, displs []int) error {
	d := deposit{kind: kindAllgatherv, send: send}
	d.err = checkLayout("allgatherv", c.rank, c.Size(), "receive", len(recv), counts, displs)
	if d.err == nil && counts[c.rank] != len(send) {
		d.err = argError("allgatherv", c.rank, "counts[%d] is %d but the send buffer is %d bytes",
			c.rank, counts[c.rank], len(send))
	}
	return c.collective("Allgatherv", d, func(op *collOp) error {
		for j := range op.deps {
			got := op.deps[j].send
			if len(got) != counts[j] {
				return notSameError("allgatherv", "rank %d contributes %d bytes but rank %d expects %d from it",
					j, len(got), c.rank, counts[j])
			}
			copy(recv[displs[j]:displs[j]+counts[j]], got)
		}
		return nil
	})
}

func (c *memComm) Alltoall(send, recv []byte, n int) error {
	d := deposit{kind: kindAlltoall, send: send, n: n}
	size := c.Size()
	switch {
	case n < 0:
		d.err = argError("alltoall", c.rank, "negative block size %d", n)
	case len(send) != size*n:
		d.err = argError("alltoall", c.rank, "send buffer is %d bytes, want %d ranks x %d bytes", len(send), size, n)
	case len(recv) != size*n:
		d.err = argError("alltoall", c.rank, "receive buffer is %d bytes, want %d ranks x %d bytes", len(recv), size, n)
	}
	me := c.rank
	return c.collective("Alltoall", d, func(op *collOp) error {
		for j := range op.deps {
			copy(recv[j*n:(j+1)*n], op.deps[j].send[me*n:(me+1)*n])
		}
		return nil
	})
}

func (c *memComm) Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	d := deposit{kind: kindAlltoallv, send: send, counts: scounts, displs: sdispls}
	d.err = checkLayout("alltoallv", c.rank, c.Size(), "send", len(send), scounts, sdispls)
	if d.err == nil {
		d.err = checkLayout("alltoallv", c.rank, c.Size(), "receive", len(recv), rcounts, rdispls)
	}
	me := c.rank
	return c.collective("Alltoallv", d, func(op *collOp) error {
		for j := range op.deps {
			from := &op.deps[j]
			sc, sd := from.counts[me], from.displs[me]
			if sc != rcounts[j] {
				return notSameError("alltoallv", "rank %d sends %d bytes to rank %d, which expects %d",
					j, sc, me, rcounts[j])
			}
			copy(recv[rdispls[j]:rdispls[j]+sc], from.send[sd:sd+sc])
		}
		return nil
	})
}

// checkLayout validates per-rank counts and displacements into a buffer
// of bufLen bytes.
func checkLayout(op string, rank, size int, which string, bufLen int, counts, displs []int) error {
	if len(counts) != size || len(displs) != size {
		return argError(op, rank, "%s counts and displacements have %d and %d entries, want %d",
			which, len(counts), len(displs), size)
	}
	for i := range counts {
		if counts[i] < 0 || displs[i] < 0 {
			return argError(op, rank, "%s block %d has count %d and displacement %d; neither may be negative",
				which, i, counts[i], displs[i])
		}
		if displs[i] > bufLen-counts[i] {
			return argError(op, rank, "%s block %d (%d bytes at %d) does not fit the %d-byte buffer",
				which, i, counts[i], displs[i], bufLen)
		}
	}
	return nil
}

func (c *memComm) AllreduceInt64(in, out []int64, op Op) error {
	d := deposit{kind: kindAllreduce, in: in, op: op}
	switch {
	case len(in) != len(out):
		d.err = argError("allreduce", c.rank, "input has %d values but output has %d", len(in), len(out))
	case !validOp(op):
		d.err = argError("allreduce", c.rank, "unknown reduction %s", opString(op))
	}
	return c.collective("Allreduce", d, func(o *collOp) error {
		copy(out, o.sum)
		return nil
	})
}

// Iallgather starts an Allgather; its request advances when polled.
func (c *memComm) Iallgather(send, recv []byte) (Request, error) {
	d := deposit{kind: kindIallgather, send: send}
	d.err = checkGatherLen("iallgather", c.rank, c.Size(), send, recv)
	cc, err := c.start("Wait(Iallgather)", d, gatherShare(recv))
	if err != nil {
		return nil, err
	}
	cc.copied = len(recv)
	return &collRequest{cc: cc}, nil
}
