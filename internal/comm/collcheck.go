package comm

import "fmt"

// collKind names the collective a rank deposited for, so that ranks calling
// different collectives at the same point get an error instead of garbage.
type collKind uint8

const (
	kindBarrier collKind = iota
	kindBcast
	kindAllgather
	kindAllgatherv
	kindAlltoall
	kindAlltoallv
	kindAllreduce
	kindIallgather
	kindSplit
	kindSplitNode
	kindDup
)

var kindNames = [...]string{
	kindBarrier:    "barrier",
	kindBcast:      "bcast",
	kindAllgather:  "allgather",
	kindAllgatherv: "allgatherv",
	kindAlltoall:   "alltoall",
	kindAlltoallv:  "alltoallv",
	kindAllreduce:  "allreduce",
	kindIallgather: "iallgather",
	kindSplit:      "split",
	kindSplitNode:  "split_node",
	kindDup:        "dup",
}

func opName(k collKind) string { return kindNames[k] }

// checkCollective runs once per collective, on the last rank to arrive,
// before anyone copies. Its error is returned by every rank. It costs O(N)
// plus what the kind needs (the Allreduce reduction, the Split grouping);
// checks that need every rank's arrays are left to each rank's copy.
func checkCollective(g *group, op *collOp) error {
	k := op.deps[0].kind
	for r, d := range op.deps {
		if d.kind != k {
			return notSameError(opName(k), "rank 0 called %s but rank %d called %s", opName(k), r, opName(d.kind))
		}
	}
	for _, d := range op.deps {
		if d.err != nil {
			return d.err // the lowest rank's own argument error, the same on every rank
		}
	}
	switch k {
	case kindBcast:
		return checkBcast(op)
	case kindAllgather, kindIallgather:
		return checkSameLen(op, k, func(d *deposit) int { return len(d.send) }, "send buffer length")
	case kindAlltoall:
		return checkSameLen(op, k, func(d *deposit) int { return d.n }, "block size")
	case kindAllreduce:
		return reduce(op)
	case kindSplit, kindSplitNode, kindDup:
		op.splits = splitGroups(g, op.deps)
	}
	return nil
}

func checkBcast(op *collOp) error {
	root := op.deps[0].root
	for r, d := range op.deps {
		if d.root != root {
			return notSameError("bcast", "rank 0 passes root %d but rank %d passes %d", root, r, d.root)
		}
	}
	want := len(op.deps[root].send)
	for r, d := range op.deps {
		if len(d.send) != want {
			return notSameError("bcast", "rank %d's buffer is %d bytes but root %d's is %d", r, len(d.send), root, want)
		}
	}
	return nil
}

func checkSameLen(op *collOp, k collKind, get func(*deposit) int, what string) error {
	want := get(&op.deps[0])
	for r := range op.deps {
		if got := get(&op.deps[r]); got != want {
			return notSameError(opName(k), "%s is %d on rank 0 but %d on rank %d", what, want, got, r)
		}
	}
	return nil
}

// reduce checks that every rank reduces the same length with the same op
// and computes the result once, into op.sum.
func reduce(op *collOp) error {
	first := &op.deps[0]
	for r, d := range op.deps {
		if len(d.in) != len(first.in) {
			return notSameError("allreduce", "rank 0 reduces %d values but rank %d reduces %d", len(first.in), r, len(d.in))
		}
		if d.op != first.op {
			return notSameError("allreduce", "rank 0 uses op %s but rank %d uses %s", opString(first.op), r, opString(d.op))
		}
	}
	sum := append([]int64(nil), first.in...)
	for _, d := range op.deps[1:] {
		combine(sum, d.in, first.op)
	}
	op.sum = sum
	return nil
}

func combine(acc, in []int64, op Op) {
	for i, v := range in {
		switch op {
		case OpSum:
			acc[i] += v
		case OpMax:
			acc[i] = max(acc[i], v)
		case OpMin:
			acc[i] = min(acc[i], v)
		}
	}
}

func validOp(op Op) bool { return op == OpSum || op == OpMax || op == OpMin }

func opString(op Op) string {
	switch op {
	case OpSum:
		return "sum"
	case OpMax:
		return "max"
	case OpMin:
		return "min"
	}
	return fmt.Sprintf("Op(%d)", int(op))
}
