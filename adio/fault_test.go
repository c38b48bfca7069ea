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
		{"collio_strategy": "independent", "collio_error_agreement": "immediate"},
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

// With collio_error_agreement=deferred, a collective transfer in which
// every rank does its own I/O does not agree on its outcome: the faulty
// rank returns its error at once, and every rank returns it from the
// file's next synchronizing call (a synchronizing transfer, which then
// does nothing, sync, set_view or close), with the same class and text.
func TestDeferredFaultReachesAllAtNextSync(t *testing.T) {
	next := []struct {
		name string
		call func(f *File, r int) error
	}{
		{"sync", func(f *File, _ int) error { return f.Sync() }},
		{"close", func(f *File, _ int) error { return f.Close() }},
		{"set_atomicity", func(f *File, _ int) error { return f.SetAtomicity(true) }},
		{"set_size", func(f *File, _ int) error { return f.SetSize(1 << 20) }},
		{"set_info", func(f *File, _ int) error { return f.SetInfo(map[string]string{"cb_buffer_size": "65536"}, false) }},
		{"set_view", func(f *File, r int) error {
			return f.SetView(View{Disp: int64(64 * r), Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(64), 0, 256))}, nil)
		}},
		// romio_cb_read=enable: the read synchronizes, and is not done.
		{"read_at_all", func(f *File, r int) error {
			_, err := f.ReadAtAll(Bytes(make([]byte, 1024)), 0)
			return err
		}},
	}
	strategies := []map[string]string{
		{"romio_cb_write": "disable"},                                // no communication at all
		{"romio_cb_write": "automatic", "romio_ds_write": "disable"}, // the entry record only: no interleaving
	}
	for _, nx := range next {
		for si, st := range strategies {
			t.Run(fmt.Sprintf("%s/strategy%d", nx.name, si), func(t *testing.T) {
				path := "faulty:" + tempPath(t, "f")
				h := map[string]string{"collio_fault": "enospc_after=100", "collio_fault_ranks": "2", "romio_cb_read": "enable"}
				for k, v := range st {
					h[k] = v
				}
				type outcome struct{ first, later error }
				got := make([]outcome, 4)
				world(t, 4, func(c comm.Comm) error {
					r := c.Rank()
					f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
					if err != nil {
						return err
					}
					// Each rank writes its own 1 KiB block: no interleaving.
					if err := f.SetView(View{Disp: int64(1024 * r), Etype: layout.Byte, Filetype: layout.Byte}, nil); err != nil {
						return err
					}
					_, got[r].first = f.WriteAtAll(Bytes(rankData(r, 1024)), 0)
					got[r].later = nx.call(f, r)
					if nx.name != "close" {
						return f.Close()
					}
					return nil
				})
				for r, o := range got {
					if r == 2 {
						require.ErrorIs(t, o.first, ioerr.ErrNoSpace, "rank 2's own call")
					} else {
						require.NoError(t, o.first, "rank %d's call: not agreed yet", r)
					}
					require.ErrorIs(t, o.later, ioerr.ErrNoSpace, "rank %d at the next synchronizing call", r)
					require.Contains(t, o.later.Error(), "an earlier collective call failed (call 1, write_at_all, on rank 2)")
					if r > 0 {
						require.Equal(t, got[0].later.Error(), o.later.Error(), "rank %d's text", r)
					}
				}
			})
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
