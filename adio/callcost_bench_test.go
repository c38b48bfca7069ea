package adio

import (
	"os"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

// The CPU cost of one small collective call on one rank, with the hints
// that fix the strategy (no communication) and with automatic choice
// (the entry record): what a call costs before any rank waits for
// another. Run with -cpuprofile to see where it goes.
func BenchmarkSmallCollectiveCall(b *testing.B) {
	for _, tc := range []struct {
		name  string
		hints map[string]string
		holes bool // a view with holes, each call inside one of its blocks (a darray tile per call)
	}{
		{"cb_disable", map[string]string{"romio_cb_write": "disable", "romio_cb_read": "disable"}, false},
		{"automatic", nil, false},
		{"automatic_holes", nil, true},
	} {
		for _, write := range []bool{true, false} {
			name := tc.name + "/read"
			if write {
				name = tc.name + "/write"
			}
			b.Run(name, func(b *testing.B) {
				dir := os.Getenv("BENCH_DIR") // e.g. /dev/shm
				if dir == "" {
					dir = b.TempDir()
				}
				path, err := os.MkdirTemp(dir, "callcost")
				if err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(path)
				const size = 16 << 10
				buf := Bytes(make([]byte, size))
				err = comm.RunWorld(1, 0, func(c comm.Comm) error {
					f, err := Open(c, path+"/f", ModeCreate|ModeRdWr, OpenOptions{Hints: tc.hints})
					if err != nil {
						return err
					}
					defer f.Close()
					if tc.holes {
						ft, err := layout.Resized(layout.Bytes(size), 0, 4*size)
						if err != nil {
							return err
						}
						if err := f.SetView(View{Etype: layout.Byte, Filetype: ft}, nil); err != nil {
							return err
						}
					}
					if _, err := f.WriteAtAll(buf, 0); err != nil {
						return err
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if write {
							_, err = f.WriteAtAll(buf, 0)
						} else {
							_, err = f.ReadAtAll(buf, 0)
						}
						if err != nil {
							return err
						}
					}
					b.StopTimer()
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
