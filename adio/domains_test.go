package adio

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// Two-phase on one node uses ROMIO's domains even where affinity domains
// would keep most bytes home; on several (virtual) nodes, or with
// collio_file_domains=affinity, it plans affinity domains. Each rank
// writes 128 KiB and the first 8 bytes of the next rank's 128 KiB, so no
// rank owns its blocks alone.
func TestAffinityDomainsOnSeveralNodesOnly(t *testing.T) {
	const share, stray = 128 << 10, 8
	for _, tc := range []struct {
		hints map[string]string
		want  string
	}{
		{map[string]string{}, "even"},
		{map[string]string{"collio_node_size": "2"}, "affinity by node"},
		{map[string]string{"collio_file_domains": "affinity"}, "affinity"},
	} {
		t.Run(fmt.Sprint(tc.hints), func(t *testing.T) {
			path := tempPath(t, "d")
			h := map[string]string{"collio_strategy": "twophase"}
			for k, v := range tc.hints {
				h[k] = v
			}
			domains := make([]string, 4)
			world(t, 4, func(c comm.Comm) error {
				r, p := c.Rank(), c.Size()
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				defer f.Close()
				lo, hi := int64(r*share), int64((r+1)*share)
				if r > 0 {
					lo += stray
				}
				if r < p-1 {
					hi += stray
				}
				if _, err := f.WriteAtAll(Bytes(bytes.Repeat([]byte{byte(r + 1)}, int(hi-lo))), lo); err != nil {
					return err
				}
				last, _ := f.Stats()
				domains[r] = last.Domains
				return nil
			})
			require.True(t, strings.HasPrefix(domains[0], tc.want), "domains %q, want %q", domains[0], tc.want)
			if tc.want == "even" {
				require.NotContains(t, domains[0], "affinity")
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			for i, b := range got {
				r := i / share
				if i%share < stray && r > 0 {
					r-- // the previous rank's stray bytes
				}
				if b != byte(r+1) {
					t.Fatalf("byte %d is %d, want %d", i, b, r+1)
				}
			}
		})
	}
}

// Across (virtual) nodes the measured choice also runs two-phase on
// ROMIO's domains where two-phase alone draws affinity domains: every
// rank alike, those calls really on even domains and the others on
// affinity domains, and the bytes those of the table alone. Each rank
// writes its 128 KiB but 8 bytes in the middle, which the rank before it
// writes, call after call.
func TestMeasuredChoiceTriesROMIODomains(t *testing.T) {
	const share, stray, calls, p = 128 << 10, 8, 12, 4
	filetype := func(r int) *layout.Type {
		lens := []int{share / 2, share / 2}
		displs := []int64{int64(r * share), int64(r*share + share/2)}
		if r > 0 {
			lens[1] -= stray
			displs[1] += stray
		}
		if r < p-1 {
			lens = append(lens, stray)
			displs = append(displs, int64((r+1)*share+share/2))
		}
		ft := must(layout.HIndexed(lens, displs, layout.Byte))
		return must(layout.Resized(ft, 0, p*share))
	}
	run := func(measure string) ([][]string, [][]string, []byte) {
		path := tempPath(t, "romiodomains"+measure)
		h := map[string]string{"collio_measure": measure, "collio_node_size": "1"}
		reasons, domains := make([][]string, p), make([][]string, p)
		world(t, p, func(c comm.Comm) error {
			r := c.Rank()
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			ft := filetype(r)
			if err := f.SetView(View{Etype: layout.Byte, Filetype: ft}, nil); err != nil {
				return err
			}
			size := ft.Size()
			for i := range calls {
				if _, err := f.WriteAtAll(Bytes(rankData(r+p*i, size)), int64(i)*size); err != nil {
					return fmt.Errorf("write %d: %w", i, err)
				}
				last, _ := f.Stats()
				reasons[r] = append(reasons[r], last.Reason)
				domains[r] = append(domains[r], last.Domains)
			}
			return nil
		})
		return reasons, domains, readFile(t, path)
	}
	_, tableDomains, tableBytes := run("disable")
	reasons, domains, got := run("enable")
	require.Len(t, got, calls*p*share)
	require.Equal(t, tableBytes, got)
	require.True(t, strings.HasPrefix(tableDomains[0][0], "affinity"), "table's call: %q", tableDomains[0][0])
	tried, kept := 0, 0
	for i, reason := range reasons[0] {
		for r := range p {
			require.Equal(t, reason, reasons[r][i], "call %d: rank %d chose otherwise", i, r)
		}
		switch {
		case strings.Contains(reason, "trying twophase without affinity domains"):
			tried++
			require.Equal(t, "even", domains[0][i], "call %d: %s", i, reason)
		case strings.Contains(reason, "trying twophase ("):
			kept++
			require.True(t, strings.HasPrefix(domains[0][i], "affinity"), "call %d: %s: domains %q", i, reason, domains[0][i])
		}
	}
	require.NotZero(t, tried, "never tried: %q", reasons[0])
	require.NotZero(t, kept, "two-phase itself never tried: %q", reasons[0])
}
