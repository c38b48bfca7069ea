//go:build cgo

package main

// The overlap mode (-overlap): the array written and read with
// IWriteAtAll/IReadAtAll + compute + Wait against compute + WriteAtAll/
// ReadAtAll, on one open file (benchutil.RunOverlap).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
)

func runOverlap(world comm.Comm, cfg config, blk block, rep *report) int {
	rank := world.Rank()
	path := filepath.Join(cfg.dir, "collperf.overlap")
	if cfg.driver != "" {
		path = cfg.driver + ":" + path
	}
	rs, err := overlapFile(world, cfg, blk, path)
	if rank == 0 && !cfg.keep {
		collio.Delete(path)
	}
	rep.Overlap = rs
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
		if rank == 0 {
			fmt.Fprintln(os.Stderr, "collperf: overlap:", err)
		}
	}
	if rank == 0 {
		if !cfg.quiet {
			benchutil.PrintOverlap(os.Stdout, cfg.name, rs, cfg.busy)
		}
		for _, r := range rs {
			fmt.Println(benchutil.OverlapLine(cfg.name, world.Size(), 4*int64(blk.elements()), r))
		}
		if cfg.jsonPath != "" {
			if jerr := benchutil.WriteJSON(cfg.jsonPath, rep); jerr != nil {
				fmt.Fprintln(os.Stderr, "collperf:", jerr)
				err = errors.Join(err, jerr)
			}
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// overlapFile opens the file once and measures on it.
func overlapFile(world comm.Comm, cfg config, blk block, path string) ([]benchutil.OverlapResult, error) {
	f, err := collio.Open(world, path, collio.ModeCreate|collio.ModeRdWr, cfg.hints)
	if err != nil {
		return nil, err
	}
	sub, err := collio.Subarray(cfg.size[:], blk.size[:], blk.start[:], collio.OrderC, collio.Int32)
	if err == nil {
		err = f.SetView(0, collio.Int32, sub, nil)
	}
	if err = benchutil.Agree(world, err); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	wbuf := make([]byte, 4*blk.elements())
	blk.fillBytes(cfg.size, wbuf)
	rbuf := make([]byte, len(wbuf))
	x := benchutil.OverlapIO{
		Blocking: func(write bool) error {
			if write {
				_, err := f.WriteAtAll(wbuf, 0)
				return err
			}
			_, err := f.ReadAtAll(rbuf, 0)
			return err
		},
		Start: func(write bool) (func() error, error) {
			var req *collio.Request
			var err error
			if write {
				req, err = f.IWriteAtAll(wbuf, 0)
			} else {
				req, err = f.IReadAtAll(rbuf, 0)
			}
			if err != nil {
				return nil, err
			}
			return func() error {
				n, err := req.Wait()
				if err == nil && n != int64(len(wbuf)) {
					err = fmt.Errorf("a nonblocking transfer moved %d bytes of %d", n, len(wbuf))
				}
				return err
			}, nil
		},
		AfterRead: func() int64 {
			bad, _ := blk.verifyBytes(cfg.size, rbuf)
			clear(rbuf)
			return int64(bad)
		},
	}
	rs, err := benchutil.RunOverlap(world, x, cfg.overlap, cfg.overlapRounds, cfg.busy)
	return rs, errors.Join(err, f.Close())
}
