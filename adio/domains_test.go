package adio

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
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
