package cache

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// journalBytes is a journal as the writer lays it out.
func journalBytes(global, cachePath string, discard bool, id identity, recs ...record) []byte {
	b := encodeHeader(global, cachePath, discard, id)
	for _, r := range recs {
		b = append(b, encodeRecord(r)...)
	}
	return b
}

// FuzzParseJournal feeds arbitrary journals (what collio recover and the
// next open read after a crash) to parseJournal and to a dry-run Recover:
// nothing may panic; a bad journal is an error wrapping errBadJournal; an
// accepted one has only pending writes inside [0, 2^63), a header that
// re-encodes to the bytes read, and pending records that survive a round
// trip; a dry-run Recover counts the same and fails only with ErrUnsafe. Seeds: testdata/fuzz/FuzzParseJournal.
func FuzzParseJournal(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		checkJournal(t, data)
		// Mutations rarely keep checksums right: check the journal again
		// with them recomputed, so that records get exercised too.
		checkJournal(t, fixChecksums(data))
	})
}

// fixChecksums recomputes the header checksum and those of the records
// whose padding byte 1 is zero (the others stay torn).
func fixChecksums(data []byte) []byte {
	b := append([]byte(nil), data...)
	pos := 28
	for range 2 {
		if len(b) < pos+4 {
			return b
		}
		pos += 4 + int(binary.LittleEndian.Uint32(b[pos:]))
	}
	if pos < 0 || len(b) < pos+4 {
		return b
	}
	binary.LittleEndian.PutUint32(b[pos:], crc32.ChecksumIEEE(b[:pos]))
	for r := pos + 4; r+recordSize <= len(b); r += recordSize {
		if b[r+1] == 0 {
			binary.LittleEndian.PutUint32(b[r+4:], recordCRC(b[r:r+recordSize]))
		}
	}
	return b
}

func checkJournal(t *testing.T, data []byte) {
	t.Helper()
	info, hdrLen, err := parseJournal(data)
	if err != nil {
		if !errors.Is(err, errBadJournal) {
			t.Fatalf("error does not wrap errBadJournal: %v", err)
		}
		return
	}
	if hdrLen < 8+20+4+4+4 || hdrLen > int64(len(data)) {
		t.Fatalf("header length %d of a %d-byte journal", hdrLen, len(data))
	}
	if flags := binary.LittleEndian.Uint32(data[8:]); flags&^flagDiscard == 0 {
		hdr := encodeHeader(info.Global, info.Cache, info.Discard, info.id)
		if string(hdr) != string(data[:hdrLen]) {
			t.Fatalf("header re-encodes to %q, read %q", hdr, data[:hdrLen])
		}
	}
	var recs []record
	for _, r := range info.Pending {
		if r.off < 0 || r.len <= 0 || r.off > math.MaxInt64-r.len {
			t.Fatalf("pending write of %d bytes at %d", r.len, r.off)
		}
		recs = append(recs, r)
	}
	var total int64
	prevEnd := int64(-1)
	for _, s := range mergeRecords(info.Pending) {
		if s.start <= prevEnd || s.end <= s.start {
			t.Fatalf("merged spans out of order: %+v", mergeRecords(info.Pending))
		}
		prevEnd = s.end
		total += s.end - s.start
		if total < 0 {
			t.Fatal("bytes to copy overflow")
		}
	}
	again, _, err := parseJournal(journalBytes(info.Global, info.Cache, info.Discard, info.id, recs...))
	if err != nil || len(again.Pending) != len(recs) {
		t.Fatalf("pending records do not survive a round trip: %v, %d of %d", err, len(again.Pending), len(recs))
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.journal"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// A journal that parses may still be refused (it names no cache file
	// beside it, or no global file's identity): then with ErrUnsafe, after
	// counting what it lists.
	out, err := Recover(dir, RecoverOptions{DryRun: true})
	if (err != nil && !errors.Is(err, ErrUnsafe)) || len(out) != 1 || out[0].Extents != len(recs) || out[0].Bytes != total {
		t.Fatalf("dry-run Recover: %+v, %v", out, err)
	}
}

// Damaged journals are refused with an error that says what is wrong, and
// a length claiming 4 GiB allocates nothing.
func TestParseJournalNamesProblems(t *testing.T) {
	good := journalBytes("/g/f", "/c/f", false, identity{}, record{kind: kindWrite, seq: 1, off: 0, len: 8})
	hdr := len(good) - recordSize
	huge := append([]byte(nil), good[:28]...)
	huge = binary.LittleEndian.AppendUint32(huge, math.MaxUint32)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not a collio cache journal"},
		{"other magic", []byte("COLLIOJ2" + strings.Repeat("\x00", 40)), "not a collio cache journal"},
		{"truncated", good[:20], "header truncated at 20 bytes"},
		{"no length", good[:29], "truncated before the global path's length"},
		{"4 GiB path", huge, "global path's length 4294967295 exceeds the 0 bytes left"},
		{"bad checksum", append(append([]byte(nil), good[:hdr-1]...), good[hdr-1]^1), "header checksum"},
		{"overflowing record", journalBytes("/g/f", "/c/f", false, identity{},
			record{kind: kindWrite, seq: 1, off: math.MaxInt64 - 4, len: 8}), "record 0 (at byte 48): write of 8 bytes at offset 9223372036854775803 is out of range"},
		{"negative offset", journalBytes("/g/f", "/c/f", false, identity{},
			record{kind: kindWrite, seq: 1, off: 0, len: 8}, record{kind: kindWrite, seq: 2, off: -8, len: 8}), "record 1 (at byte 80)"},
	} {
		allocs := testing.AllocsPerRun(1, func() { _, _, _ = parseJournal(tc.b) })
		_, _, err := parseJournal(tc.b)
		if !errors.Is(err, errBadJournal) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if allocs > 10 {
			t.Errorf("%s: %v allocations", tc.name, allocs)
		}
	}
}
