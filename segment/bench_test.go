package segment

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/twophase"
)

// BenchmarkWrite: 16 ranks writing 1 MiB each, block-cyclic 4 KiB blocks,
// 4 aggregators, 1 MiB cycles; twophase for comparison.
func BenchmarkWrite(b *testing.B) {
	const np, per, blk = 16, 1 << 20, 4096
	ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, np*blk))
	bufs := make([][]byte, np)
	for r := range bufs {
		bufs[r] = refmodel.Fill(per, r)
	}
	variants := []string{"twophase"}
	for _, m := range modes {
		variants = append(variants, modeName(m))
	}
	for i, v := range variants {
		b.Run(v, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "b")
			b.SetBytes(np * per)
			for b.Loop() {
				err := comm.RunWorld(np, 0, func(c comm.Comm) error {
					r := c.Rank()
					f, err := ufs.New().Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
					if err != nil {
						return err
					}
					defer f.Close()
					rs := make([]coll.Range, np)
					for k := range rs {
						rs[k] = coll.Range{Start: int64(k * blk), End: int64(np*per - (np-1-k)*blk)}
					}
					j := &coll.Job{Comm: c, File: f, Aggregators: evenAggs(np, 4), Ranges: rs, BufSize: 1 << 20,
						Access: coll.Access{Buf: bufs[r], Count: per, Filetype: ft, Disp: int64(r * blk), Size: per}}
					if i == 0 {
						return twophase.Write(j, twophase.DomainRule{})
					}
					j.Overlap = modes[i-1].Overlap
					return Write(j, modes[i-1].Dynamic)
				})
				if err != nil {
					b.Fatal(fmt.Sprint(err))
				}
			}
		})
	}
}
