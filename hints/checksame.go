package hints

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// CheckSame checks that every rank of c holds the same effective value for
// every MustAgree hint. It is collective: all ranks make the same sequence of
// calls whatever their values, so it never hangs, and all ranks return the
// same error, of class ioerr.ErrNotSame, naming each differing key, rank
// 0's value and the ranks that differ with their values.
//
// Protocol: rank 0 broadcasts its MustAgree keys and values (length, then
// bytes); each rank compares and contributes a bitmap of the keys it
// differs on (Allgather); only if some bit is set anywhere, which every
// rank then knows, the differing values are gathered (Allgather of lengths,
// then Allgatherv) to build the message.
func CheckSame(c comm.Comm, s *Set) error {
	if c.Size() == 1 {
		return nil
	}
	var mine []byte
	if c.Rank() == 0 {
		mine = encodeStrings(s.agreePairs())
	}
	ref, err := bcastBytes(c, mine)
	if err != nil {
		return commError(err)
	}
	flat, ok := decodeStrings(ref, 2*maxWireHints)
	if !ok || len(flat)%2 != 0 {
		return commError(fmt.Errorf("malformed hint broadcast (%d bytes): not a list of at most %d key-value pairs", len(ref), maxWireHints))
	}
	root := make([]pair, len(flat)/2)
	for i := range root {
		root[i] = pair{flat[2*i], flat[2*i+1]}
	}

	differs := s.compare(root)
	nbytes := (len(root) + 7) / 8
	all := make([]byte, nbytes*c.Size())
	if err := c.Allgather(packBits(differs, nbytes), all); err != nil {
		return commError(err)
	}
	bits := unpackBits(all, nbytes, len(root), c.Size())
	if !anySet(bits) {
		return nil
	}
	values, err := gatherDiffering(c, s, root, bits)
	if err != nil {
		return commError(err)
	}
	return notSameError(root, bits, values)
}

// AgreeDigest is a 64-bit FNV-1a hash of the MustAgree keys and values:
// ranks whose digests are equal hold the same values (up to a collision of
// the hash), so open can compare digests in an agreement it makes anyway
// and run CheckSame, for its message, only when they differ.
func (s *Set) AgreeDigest() uint64 {
	h := fnv.New64a()
	for _, v := range s.agreePairs() {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

type pair struct{ key, value string }

// agreePairs lists the MustAgree keys in table order, each followed by its value.
func (s *Set) agreePairs() []string {
	var kv []string
	for _, spec := range Table {
		if spec.MustAgree {
			kv = append(kv, spec.Key, s.entries[spec.Key].value)
		}
	}
	return kv
}

// compare marks which of rank 0's pairs this set disagrees with. A key this
// rank does not hold (a different collio build) counts as different.
func (s *Set) compare(root []pair) []bool {
	differs := make([]bool, len(root))
	for i, p := range root {
		e, ok := s.entries[p.key]
		differs[i] = !ok || e.value != p.value
	}
	return differs
}

// maxWireBytes bounds what CheckSame accepts from another rank before
// allocating for it: hint keys and values (MPI_MAX_INFO_KEY and
// MPI_MAX_INFO_VAL are 36 and 256 in Open MPI) come nowhere near it.
const maxWireBytes = 16 << 20

// maxWireHints bounds the hints rank 0 may list (collio has about 30 that
// must agree), so that a damaged broadcast cannot make every rank compare
// and report millions of keys.
const maxWireHints = 1024

// bcastBytes broadcasts rank 0's data of any length: length first, then bytes.
func bcastBytes(c comm.Comm, data []byte) ([]byte, error) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	if err := c.Bcast(n[:], 0); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(n[:])
	if size > maxWireBytes {
		return nil, fmt.Errorf("hint broadcast of %d bytes is implausible (more than %d)", size, maxWireBytes)
	}
	buf := make([]byte, size)
	if c.Rank() == 0 {
		copy(buf, data)
	}
	if err := c.Bcast(buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

// gatherDiffering collects from every rank its values of the keys it
// differs on, in key order, so that all ranks can name them. Result:
// rank -> key index -> value.
func gatherDiffering(c comm.Comm, s *Set, root []pair, bits [][]bool) ([]map[int]string, error) {
	var mine []string
	for k, d := range bits[c.Rank()] {
		if d {
			mine = append(mine, s.entries[root[k].key].value)
		}
	}
	send := encodeStrings(mine)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(send)))
	lens := make([]byte, 8*c.Size())
	if err := c.Allgather(n[:], lens); err != nil {
		return nil, err
	}
	counts := make([]int, c.Size())
	displs := make([]int, c.Size())
	total := 0
	for r := range counts {
		n := binary.LittleEndian.Uint64(lens[8*r:])
		if n > maxWireBytes-uint64(total) {
			return nil, fmt.Errorf("rank %d's differing hint values are %d bytes, more than the %d left of %d", r, n, maxWireBytes-total, maxWireBytes)
		}
		counts[r] = int(n)
		displs[r] = total
		total += counts[r]
	}
	recv := make([]byte, total)
	if err := c.Allgatherv(send, recv, counts, displs); err != nil {
		return nil, err
	}
	values := make([]map[int]string, c.Size())
	for r := range values {
		values[r] = map[int]string{}
		vs, _ := decodeStrings(recv[displs[r]:displs[r]+counts[r]], len(root))
		for k, d := range bits[r] {
			if d && len(vs) > 0 {
				values[r][k], vs = vs[0], vs[1:]
			}
		}
	}
	return values, nil
}

// notSameError builds the one error every rank returns.
func notSameError(root []pair, bits [][]bool, values []map[int]string) error {
	diffRanks := map[int][]int{}
	for r, row := range bits {
		for k, d := range row {
			if d {
				diffRanks[k] = append(diffRanks[k], r)
			}
		}
	}
	var msgs []string
	for _, k := range slices.Sorted(maps.Keys(diffRanks)) {
		msgs = append(msgs, fmt.Sprintf("hint %s differs between ranks: rank 0 has %s, %s",
			root[k].key, showValue(root[k].value), describeDiffering(k, diffRanks[k], values)))
	}
	return ioerr.New(ioerr.ErrNotSame, "", "%s", strings.Join(msgs, "; "))
}

// maxValueGroups bounds how many distinct differing values a message lists.
const maxValueGroups = 4

// describeDiffering groups the differing ranks by value:
// "ranks [2 3] have 8388608, rank 5 has 1".
func describeDiffering(k int, ranks []int, values []map[int]string) string {
	var order []string
	byValue := map[string][]int{}
	for _, r := range ranks {
		v := values[r][k]
		if _, seen := byValue[v]; !seen {
			order = append(order, v)
		}
		byValue[v] = append(byValue[v], r)
	}
	var parts []string
	for i, v := range order {
		if i == maxValueGroups {
			rest := 0
			for _, v := range order[i:] {
				rest += len(byValue[v])
			}
			parts = append(parts, fmt.Sprintf("%d more ranks differ", rest))
			break
		}
		rs := byValue[v]
		if len(rs) == 1 {
			parts = append(parts, fmt.Sprintf("rank %d has %s", rs[0], showValue(v)))
		} else {
			parts = append(parts, fmt.Sprintf("ranks %s have %s", formatRanks(rs), showValue(v)))
		}
	}
	return strings.Join(parts, ", ")
}

// formatRanks prints sorted ranks compactly, runs as ranges: [2 3] or [4-9 12].
func formatRanks(rs []int) string {
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(rs[i]))
		case j == i+1:
			parts = append(parts, fmt.Sprint(rs[i]), fmt.Sprint(rs[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", rs[i], rs[j]))
		}
		i = j + 1
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// showValue prints a value for a message: quoted only when it would be
// unreadable bare, shortened when long.
func showValue(v string) string {
	const max = 80
	if len(v) > max {
		v = v[:max] + "..."
	}
	if v == "" || strings.ContainsAny(v, " \t,;\"") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

func commError(err error) error {
	return &ioerr.Error{Class: ioerr.ErrInternComm, Rank: -1, Msg: "checking that hints agree between ranks: " + err.Error(), Err: err}
}
