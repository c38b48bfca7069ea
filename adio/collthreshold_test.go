package adio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// romio_lustre_coll_threshold, as ROMIO's Lustre driver: collective writes
// to a striped file whose ranks' ranges do not interleave are aggregated
// when their requests average at most the threshold, written
// independently when larger; 0 keeps collio's rule (independent). No
// effect without striping, on reads, on interleaved calls, or when
// romio_cb_write is not automatic.
func TestCollThresholdChoice(t *testing.T) {
	apart := []coll.Range{{Start: 0, End: 100 << 10}, {Start: 100 << 10, End: 200 << 10}}
	inter := []coll.Range{{Start: 0, End: 100 << 10}, {Start: 50 << 10, End: 150 << 10}}
	const bytes = 100 << 10 // over all ranks
	for i, tc := range []struct {
		h       map[string]string
		write   bool
		striped bool
		ranges  []coll.Range
		pieces  int64 // over all ranks: the mean piece is bytes/pieces
		want    string
	}{
		{map[string]string{"romio_lustre_coll_threshold": "1m"}, true, true, apart, 100, "twophase"},      // 1 KiB pieces
		{map[string]string{"romio_lustre_coll_threshold": "1024"}, true, true, apart, 100, "twophase"},    // exactly the threshold
		{map[string]string{"romio_lustre_coll_threshold": "1023"}, true, true, apart, 100, "independent"}, // above it
		{map[string]string{"romio_lustre_coll_threshold": "0"}, true, true, apart, 100, "independent"},    // off: collio's rule
		{nil, true, true, apart, 100, "independent"},
		{map[string]string{"romio_lustre_coll_threshold": "1m"}, true, false, apart, 100, "independent"}, // no striping
		{map[string]string{"romio_lustre_coll_threshold": "1m"}, false, true, apart, 100, "independent"}, // reads
		{map[string]string{"romio_lustre_coll_threshold": "1m"}, true, true, apart, 0, "independent"},    // pieces unknown
		{map[string]string{"romio_lustre_coll_threshold": "1m", "romio_cb_write": "disable"}, true, true, apart, 100, "independent"},
		{map[string]string{"romio_lustre_coll_threshold": "16", "romio_cb_write": "enable"}, true, true, apart, 100, "twophase"},
		{map[string]string{"romio_lustre_coll_threshold": "16"}, true, true, inter, 100, "twophase"}, // interleaved: collective anyway
	} {
		h, err := hints.Resolve(tc.h, hints.Options{Getenv: func(string) string { return "" }})
		require.NoError(t, err)
		name, reason, err := chooseStrategy(ptr(newConfig(h)), situation{write: tc.write, ranges: tc.ranges, nodes: 2, striped: tc.striped, sieve: true, bytes: bytes, pieces: tc.pieces})
		require.NoError(t, err)
		require.Equal(t, tc.want, name, "%v write %v striped %v pieces %d: %s", tc.h, tc.write, tc.striped, tc.pieces, reason)
		if i < 3 { // the threshold decided
			require.Contains(t, reason, fmt.Sprintf("romio_lustre_coll_threshold=%d", h.Int(hints.RomioLustreCollThreshold)))
		}
	}
}

// End to end on the emulated striped file system: three ranks write
// 1000-byte records, each in its own part of the file (no interleaving).
// With the threshold at 4 KiB the call goes through two-phase, at 512
// bytes and at 0 through independent writes; the file is the same.
func TestCollThresholdOnSim(t *testing.T) {
	const ranks, records, rec = 3, 40, 1000
	want := []byte{}
	for r := 0; r < ranks; r++ {
		v := View{Disp: int64(r) * records * 2048, Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(rec), 0, 2048))}
		want = expected(want, v, 0, rankData(r, records*rec))
	}
	for _, tc := range []struct{ threshold, strategy string }{
		{"4096", "twophase"}, {"512", "independent"}, {"0", "independent"},
	} {
		p := tempPath(t, "s")
		h := map[string]string{"romio_lustre_coll_threshold": tc.threshold, "cb_config_list": "*:*", "collio_sim_bandwidth": "0",
			"collio_sim_latency": "0", "collio_sim_lock_latency": "0", "striping_unit": "4096", "striping_factor": "2",
			"collio_error_agreement": "immediate"}
		world(t, ranks, func(c comm.Comm) error {
			f, err := Open(c, "sim:"+p, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			// Records every 2 KiB, holes between them, in the rank's own
			// 80 KiB part of the file.
			ft := must(layout.Resized(layout.Bytes(rec), 0, 2048))
			if err := f.SetView(View{Disp: int64(c.Rank()) * records * 2048, Etype: layout.Byte, Filetype: ft}, nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(Bytes(rankData(c.Rank(), records*rec)), 0); err != nil {
				return err
			}
			last, _ := f.Stats()
			if last.Strategy != tc.strategy {
				return fmt.Errorf("threshold %s: %s (%s), want %s", tc.threshold, last.Strategy, last.Reason, tc.strategy)
			}
			if tc.threshold != "0" && !strings.Contains(last.Reason, "romio_lustre_coll_threshold="+tc.threshold) {
				return fmt.Errorf("reason %q does not name the threshold", last.Reason)
			}
			back := make([]byte, records*rec)
			if _, err := f.ReadAtAll(Bytes(back), 0); err != nil {
				return err
			}
			if string(back) != string(rankData(c.Rank(), records*rec)) {
				return fmt.Errorf("rank %d read back other bytes", c.Rank())
			}
			return nil
		})
		got := readFile(t, p)
		require.Equal(t, want, got, "threshold %s", tc.threshold)
	}
}
