//go:build cgo

package main

// The overlap mode (-overlap): one pass is every transfer of the rank, as
// in a write or read repetition. The blocking form makes the calls one
// after the other (write_at_all); the nonblocking form starts them all
// (iwrite_at_all, each with its own buffer), computes, and waits for all
// (benchutil.RunOverlap).

import (
	"errors"
	"fmt"
	"os"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
)

func (b *bench) runOverlap(rep *report) int {
	cfg := b.cfg
	path := b.path("collio", b.rank)
	rs, err := b.overlapFile(path)
	if b.rank == 0 && !cfg.keep {
		collio.Delete(path)
	}
	rep.Overlap = rs
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
		if b.rank == 0 {
			fmt.Fprintln(os.Stderr, "iorbench: overlap:", err)
		}
	}
	if b.rank == 0 {
		if !cfg.quiet {
			benchutil.PrintOverlap(os.Stdout, cfg.name, rs, cfg.busy)
		}
		for _, r := range rs {
			fmt.Println(benchutil.OverlapLine(cfg.name, b.np, int64(cfg.segments)*cfg.block, r))
		}
		if cfg.jsonPath != "" {
			if jerr := benchutil.WriteJSON(cfg.jsonPath, rep); jerr != nil {
				fmt.Fprintln(os.Stderr, "iorbench:", jerr)
				err = errors.Join(err, jerr)
			}
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// overlapFile opens the shared file once and measures on it.
func (b *bench) overlapFile(path string) ([]benchutil.OverlapResult, error) {
	cfg := b.cfg
	f, err := collio.Open(b.world, path, collio.ModeCreate|collio.ModeRdWr, cfg.hints)
	if err != nil {
		return nil, err
	}
	if cfg.useView {
		var ft *collio.Type
		if ft, err = collio.Resized(collio.Bytes(cfg.block), 0, int64(b.np)*cfg.block); err == nil {
			err = f.SetView(int64(b.rank)*cfg.block, collio.Byte, ft, nil)
		}
	}
	if err = benchutil.Agree(b.world, err); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	n := b.lay.calls()
	key := patternKey(0, 1)
	wbuf := make([]byte, n*cfg.xfer)
	rbuf := make([]byte, len(wbuf))
	piece := func(buf []byte, i int64) []byte { return buf[i*cfg.xfer : (i+1)*cfg.xfer] }
	for i := range n {
		fill(piece(wbuf, i), b.lay.fileOffset(b.rank, i), key)
	}
	pick := func(write bool) []byte {
		if write {
			return wbuf
		}
		return rbuf
	}
	moved := func(got int, err error) error {
		if err == nil && int64(got) != cfg.xfer {
			err = fmt.Errorf("a call moved %d bytes of %d", got, cfg.xfer)
		}
		return err
	}
	x := benchutil.OverlapIO{
		Blocking: func(write bool) error {
			buf := pick(write)
			for i := range n {
				var err error
				if write {
					err = moved(f.WriteAtAll(piece(buf, i), b.lay.callOffset(b.rank, i)))
				} else {
					err = moved(f.ReadAtAll(piece(buf, i), b.lay.callOffset(b.rank, i)))
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
		Start: func(write bool) (func() error, error) {
			buf := pick(write)
			reqs := make([]*collio.Request, 0, n)
			wait := func() error {
				err := collio.WaitAll(reqs...)
				for _, r := range reqs {
					if got, rerr := r.Wait(); err == nil && rerr == nil && got != cfg.xfer {
						err = fmt.Errorf("a nonblocking call moved %d bytes of %d", got, cfg.xfer)
					}
				}
				return err
			}
			for i := range n {
				var r *collio.Request
				var err error
				if write {
					r, err = f.IWriteAtAll(piece(buf, i), b.lay.callOffset(b.rank, i))
				} else {
					r, err = f.IReadAtAll(piece(buf, i), b.lay.callOffset(b.rank, i))
				}
				if err != nil {
					return nil, errors.Join(err, wait())
				}
				reqs = append(reqs, r)
			}
			return wait, nil
		},
		AfterRead: func() int64 {
			var bad int64
			for i := range n {
				bad += verify(piece(rbuf, i), b.lay.fileOffset(b.rank, i), key)
			}
			clear(rbuf)
			return bad
		},
	}
	rs, err := benchutil.RunOverlap(b.world, x, cfg.overlap, cfg.overlapRounds, cfg.busy)
	return rs, errors.Join(err, f.Close())
}
