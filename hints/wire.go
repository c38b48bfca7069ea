package hints

import "encoding/binary"

// Wire helpers for CheckSame's messages.

// packBits packs flags into n bytes, flag i in bit i%8 of byte i/8.
func packBits(flags []bool, n int) []byte {
	b := make([]byte, n)
	for i, f := range flags {
		if f {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// unpackBits splits an Allgather of nbytes-long bitmaps into one row of
// nkeys flags per rank.
func unpackBits(all []byte, nbytes, nkeys, size int) [][]bool {
	rows := make([][]bool, size)
	for r := range rows {
		rows[r] = make([]bool, nkeys)
		for k := range nkeys {
			rows[r][k] = all[r*nbytes+k/8]&(1<<(k%8)) != 0
		}
	}
	return rows
}

func anySet(rows [][]bool) bool {
	for _, row := range rows {
		for _, f := range row {
			if f {
				return true
			}
		}
	}
	return false
}

// encodeStrings serialises strings, each prefixed by its uvarint length.
func encodeStrings(ss []string) []byte {
	var b []byte
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeStrings is the inverse of encodeStrings; false if b is malformed
// or holds more than max strings.
func decodeStrings(b []byte, max int) ([]string, bool) {
	var ss []string
	for len(b) > 0 {
		if len(ss) == max {
			return nil, false
		}
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, false
		}
		ss = append(ss, string(b[w:w+int(n)]))
		b = b[w+int(n):]
	}
	return ss, true
}
