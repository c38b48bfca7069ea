package cache_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"pgregory.net/rapid"
)

// pass is one collective write: every rank writes count records of rec
// bytes, round-robin over the ranks, from byte shift.
type pass struct{ rec, count, shift int64 }

func (p pass) view(r, n int) adio.View {
	ft := must(layout.Resized(layout.Bytes(p.rec), 0, p.rec*int64(n)))
	return adio.View{Disp: p.shift + int64(r)*p.rec, Etype: layout.Byte, Filetype: ft}
}

// apply lays pass k's data of every rank over file, as the collective
// write must leave it.
func (p pass) apply(file []byte, k, n int) []byte {
	for r := 0; r < n; r++ {
		data := rankData(r, k, p.rec*p.count)
		for i := int64(0); i < p.count; i++ {
			at := p.shift + (i*int64(n)+int64(r))*p.rec
			if end := at + p.rec; int64(len(file)) < end {
				file = append(file, make([]byte, end-int64(len(file)))...)
			}
			copy(file[at:], data[i*p.rec:(i+1)*p.rec])
		}
	}
	return file
}

// Random sequences of overlapping collective writes through the cache,
// with random strategies, aggregators, flush policies and workers: each
// rank reads back its last pass collectively before any sync, and after
// close the global file is what the passes, applied in order, give. The
// passes' record sizes differ, so the aggregators that cached a byte
// change from pass to pass.
func TestCachedPassesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 7).Draw(rt, "ranks")
		var passes []pass
		for k := range rapid.IntRange(2, 4).Draw(rt, "passes") {
			passes = append(passes, pass{
				rec:   int64(rapid.IntRange(1, 300).Draw(rt, fmt.Sprintf("rec%d", k))),
				count: int64(rapid.IntRange(1, 6).Draw(rt, fmt.Sprintf("count%d", k))),
				shift: int64(rapid.IntRange(0, 500).Draw(rt, fmt.Sprintf("shift%d", k))),
			})
		}
		h := map[string]string{
			"collio_strategy":      rapid.SampledFrom([]string{"auto", "twophase", "dynamic", "static", "tam", "independent"}).Draw(rt, "strategy"),
			"cb_buffer_size":       strconv.Itoa(rapid.SampledFrom([]int{64, 500, 1 << 20}).Draw(rt, "cb_buffer_size")),
			"collio_node_size":     strconv.Itoa(rapid.IntRange(0, 3).Draw(rt, "node_size")),
			"e10_cache":            rapid.SampledFrom([]string{"enable", "coherent"}).Draw(rt, "e10_cache"),
			"e10_cache_flush_flag": rapid.SampledFrom([]string{"flush_immediate", "flush_onclose", "flush_none"}).Draw(rt, "flush"),
			"e10_cache_threads":    strconv.Itoa(rapid.IntRange(1, 4).Draw(rt, "threads")),
			"ind_wr_buffer_size":   strconv.Itoa(rapid.SampledFrom([]int{100, 4096}).Draw(rt, "chunk")),
			"e10_cache_path":       t.TempDir(),
		}
		if rapid.Bool().Draw(rt, "explicit aggregators") {
			h["cb_config_list"] = "*:*"
			h["cb_nodes"] = strconv.Itoa(rapid.IntRange(1, n).Draw(rt, "cb_nodes"))
		}
		var want []byte
		for k, p := range passes {
			want = p.apply(want, k, n)
		}
		last := passes[len(passes)-1]
		path := filepath.Join(t.TempDir(), "f")
		err := comm.RunWorldTimeout(n, 0, 30*time.Second, func(c comm.Comm) error {
			f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			for k, p := range passes {
				if err := f.SetView(p.view(c.Rank(), n), nil); err != nil {
					return err
				}
				if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), k, p.rec*p.count)), 0); err != nil {
					return fmt.Errorf("pass %d: %w", k, err)
				}
			}
			got := make([]byte, last.rec*last.count)
			if _, err := f.ReadAtAll(adio.Bytes(got), 0); err != nil {
				return fmt.Errorf("read back: %w", err)
			}
			if mine := rankData(c.Rank(), len(passes)-1, last.rec*last.count); !bytes.Equal(got, mine) {
				return fmt.Errorf("rank %d reads back stale bytes of its last pass", c.Rank())
			}
			return f.Close()
		})
		if err != nil {
			rt.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			rt.Fatalf("global file differs from the passes applied in order (%d vs %d bytes)", len(got), len(want))
		}
	})
}
