package adio

import (
	"fmt"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"

	_ "github.com/collio/collio/driver/faulty"
	_ "github.com/collio/collio/driver/sim"
)

// A write fault on one rank is the error of every rank, for every
// strategy, whether the faulty rank aggregates or not; nothing reports
// success for data that was not written, and nothing hangs.
func TestFaultOnOneRankReachesAll(t *testing.T) {
	faults := []struct {
		rule  string
		class *ioerr.Class
	}{
		{"enospc_after=100", ioerr.ErrNoSpace},
		{"eio_call=write:1", ioerr.ErrIO},
		{"short_write=1", ioerr.ErrIO},
	}
	strategies := []map[string]string{
		{"collio_strategy": "independent"},
		{"collio_strategy": "twophase", "cb_config_list": "*:*", "cb_nodes": "1"}, // rank 0 aggregates
		{"collio_strategy": "twophase", "cb_config_list": "*:*", "cb_nodes": "4"}, // every rank aggregates
		{"collio_strategy": "twophase", "cb_config_list": "*:*", "collio_overlap": "disable"},
	}
	for _, fault := range faults {
		for si, st := range strategies {
			for _, bad := range []string{"0", "2"} {
				t.Run(fmt.Sprintf("%s/strategy%d/rank%s", fault.rule, si, bad), func(t *testing.T) {
					path := "faulty:" + tempPath(t, "f")
					h := map[string]string{"collio_fault": fault.rule, "collio_fault_ranks": bad}
					for k, v := range st {
						h[k] = v
					}
					errs := sameOnAll(t, 4, func(c comm.Comm) error {
						f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
						if err != nil {
							return err
						}
						defer f.Close()
						// Interleaved 64-byte records, 1 KiB per rank.
						ft := must(layout.Resized(layout.Bytes(64), 0, 256))
						if err := f.SetView(View{Disp: int64(64 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
							return err
						}
						n, err := f.WriteAtAll(Bytes(rankData(c.Rank(), 1024)), 0)
						if err != nil && n != 0 {
							return fmt.Errorf("failed write reported %d bytes", n)
						}
						return err
					})
					// Only the strategy that touches the faulty rank's file
					// fails: with one aggregator that is not the faulty rank,
					// the fault never fires. Otherwise every rank has the error.
					if si == 1 && bad == "2" {
						require.NoError(t, errs[0])
						return
					}
					require.ErrorIs(t, errs[0], fault.class, "got %v", errs[0])
				})
			}
		}
	}
}

// Every strategy writes the same bytes through the emulated striped file
// system as independent writes would.
func TestStrategiesOnSim(t *testing.T) {
	for _, st := range []string{"independent", "twophase"} {
		t.Run(st, func(t *testing.T) {
			p := tempPath(t, "s")
			h := map[string]string{"collio_strategy": st, "cb_config_list": "*:*", "collio_sim_bandwidth": "0",
				"collio_sim_latency": "0", "collio_sim_lock_latency": "0", "striping_unit": "4096", "striping_factor": "3"}
			world(t, 3, func(c comm.Comm) error {
				f, err := Open(c, "sim:"+p, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				defer f.Close()
				if l := f.Layout(); l.StripeSize != 4096 || l.StripeCount != 3 {
					return fmt.Errorf("sim layout %+v", l)
				}
				if f.Info()["striping_unit"] != "4096" {
					return fmt.Errorf("striping_unit echoed as %q", f.Info()["striping_unit"])
				}
				ft := must(layout.Resized(layout.Bytes(1000), 0, 3000))
				if err := f.SetView(View{Disp: int64(1000 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
					return err
				}
				_, err = f.WriteAtAll(Bytes(rankData(c.Rank(), 20000)), 0)
				return err
			})
			want := []byte{}
			for r := 0; r < 3; r++ {
				v := View{Disp: int64(1000 * r), Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(1000), 0, 3000))}
				want = expected(want, v, 0, rankData(r, 20000))
			}
			require.Equal(t, want, readFile(t, p))
		})
	}
}

// romio_lustre_ds_in_coll=disable on a striped file system: two-phase
// aggregators write each run instead of read-modify-writing the holes; the
// file is the same either way.
func TestLustreDSInColl(t *testing.T) {
	var want []byte
	for _, mode := range []string{"enable", "disable"} {
		p := tempPath(t, "s")
		h := map[string]string{"collio_strategy": "twophase", "cb_config_list": "*:*", "collio_sim_bandwidth": "0",
			"collio_sim_latency": "0", "collio_sim_lock_latency": "0", "striping_unit": "4096", "striping_factor": "2",
			"romio_lustre_ds_in_coll": mode}
		world(t, 3, func(c comm.Comm) error {
			f, err := Open(c, "sim:"+p, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			// 100 bytes of every 400 per rank: holes between the ranks' records.
			ft := must(layout.Resized(layout.Bytes(100), 0, 400))
			if err := f.SetView(View{Disp: int64(100 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(Bytes(rankData(c.Rank(), 5000)), 0); err != nil {
				return err
			}
			last, _ := f.Stats()
			if rmw := last.RMW > 0; last.Aggregator && rmw != (mode == "enable") {
				return fmt.Errorf("romio_lustre_ds_in_coll=%s: rank %d read-modify-wrote %v", mode, c.Rank(), last.RMW)
			}
			return nil
		})
		if want == nil {
			for r := 0; r < 3; r++ {
				v := View{Disp: int64(100 * r), Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(100), 0, 400))}
				want = expected(want, v, 0, rankData(r, 5000))
			}
		}
		require.Equal(t, want, readFile(t, p), mode)
	}
}
