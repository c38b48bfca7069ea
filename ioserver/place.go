package ioserver

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/collio/collio/topo"
)

// ParseCount reads a server count: a number of ranks ("8") or a share of
// the size ranks ("1%", rounded up, at least one). The result leaves at
// least one compute rank. key names the setting in errors.
func ParseCount(key, v string, size int) (int, error) {
	s := strings.TrimSpace(v)
	var n int
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f >= 100 || math.IsNaN(f) {
			return 0, fmt.Errorf("%s=%q: a share must be a percentage above 0 and below 100", key, v)
		}
		n = max(1, int(math.Ceil(f*float64(size)/100)))
	} else {
		k, err := strconv.Atoi(s)
		if err != nil || k < 0 {
			return 0, fmt.Errorf("%s=%q: want a count of ranks (0 or more) or a percentage such as 1%%", key, v)
		}
		n = k
	}
	if n >= size {
		return 0, fmt.Errorf("%s=%q: %d server ranks of %d leave no compute rank", key, v, n, size)
	}
	return n, nil
}

// PickServers chooses n server ranks spread over the nodes: one node after
// another from the last, round-robin, each giving its highest rank not yet
// taken. Rank 0, which applications tend to use for extra work, stays a
// compute rank as long as possible, and ranks a launcher placed alone on
// the last node (a rankfile or hostfile that gives the servers a node of
// their own) are the first servers. The result is sorted by server index:
// server i is the i-th rank picked. It is pure.
func PickServers(nodes topo.Nodes, n int) []int {
	members := make([][]int, nodes.Count())
	for k := range members {
		members[k] = nodes.Ranks(k)
	}
	var out []int
	for len(out) < n {
		took := false
		for k := len(members) - 1; k >= 0; k-- {
			if len(out) == n {
				break
			}
			if m := members[k]; len(m) > 0 {
				out = append(out, m[len(m)-1])
				members[k] = m[:len(m)-1]
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// DefaultUnit is how many consecutive file bytes go to one server when the
// file reports no striping.
const DefaultUnit = 1 << 20

// Unit is the size of the file blocks dealt to servers: the stripe size,
// so each server's writes stay within its stripes (one server per storage
// target when counts match), else DefaultUnit.
func Unit(stripeSize int64) int64 {
	if stripeSize > 0 {
		return stripeSize
	}
	return DefaultUnit
}

// ServerOf is the server of the block holding file offset off: blocks of
// unit bytes dealt round-robin over n servers.
func ServerOf(off, unit int64, n int) int {
	return int((off / unit) % int64(n))
}

// Piece is part of a transfer that one server handles.
type Piece struct {
	Server int
	Off    int64 // file offset
	Pos    int64 // position in the caller's buffer
	Len    int64
}

// Pieces cuts the transfer [off, off+n) at block edges and gives each
// piece its server; consecutive blocks of one server (n == 1) stay one
// piece. It is pure.
func Pieces(off, n, unit int64, servers int) []Piece {
	var out []Piece
	for pos := int64(0); pos < n; {
		o := off + pos
		l := min(n-pos, unit-o%unit)
		s := ServerOf(o, unit, servers)
		if k := len(out) - 1; k >= 0 && out[k].Server == s && out[k].Off+out[k].Len == o {
			out[k].Len += l
		} else {
			out = append(out, Piece{Server: s, Off: o, Pos: pos, Len: l})
		}
		pos += l
	}
	return out
}
