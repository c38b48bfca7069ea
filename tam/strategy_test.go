package tam

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/topo"
)

// collio_tam_local_aggregators sets the local aggregators per node; 0
// keeps TAM's default, every rank on nodes of up to ceil(512/nodes) ranks.
func TestLocalAggregatorsHint(t *testing.T) {
	nodes := topo.Virtual(16, 4)
	for value, want := range map[string]int{"0": 16, "1": 4, "2": 8} {
		h, err := hints.Resolve(map[string]string{hints.CollioTAMLocal: value}, hints.Options{
			Getenv: func(string) string { return "" }, ReadFile: func(string) ([]byte, error) { return nil, nil }})
		require.NoError(t, err)
		s := New(coll.Setting{Hints: h, Nodes: nodes})
		require.Len(t, s.cfg.Local.Aggs, want, "%s=%s", hints.CollioTAMLocal, value)
	}
}
