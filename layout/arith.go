package layout

import "math/bits"

// overflow-checked int64 arithmetic. The builder records the first overflow
// instead of returning errors from every helper, so tree code stays readable.

type checker struct{ overflow bool }

func (c *checker) add(a, b int64) int64 {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		c.overflow = true
	}
	return s
}

func (c *checker) mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0)
	ua, ub := abs64(a), abs64(b)
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 || lo > 1<<63-1 {
		c.overflow = true
		return 0
	}
	if neg {
		return -int64(lo)
	}
	return int64(lo)
}

func abs64(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
