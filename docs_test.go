package collio_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the hint reference in docs/hints.md from the hints table")

const (
	hintsDoc   = "docs/hints.md"
	hintsBegin = "<!-- hints:begin (generated from hints/table.go: go test -run TestHintsDoc -update-docs .) -->\n"
	hintsEnd   = "<!-- hints:end -->"
)

// docs/hints.md's hint reference is the hints table, generated.
func TestHintsDoc(t *testing.T) {
	b, err := os.ReadFile(hintsDoc)
	require.NoError(t, err)
	s := string(b)
	i, j := strings.Index(s, hintsBegin), strings.Index(s, hintsEnd)
	require.True(t, i >= 0 && j > i, "%s lacks the hint reference markers", hintsDoc)
	want := s[:i+len(hintsBegin)] + hints.Markdown() + s[j:]
	if *updateDocs {
		require.NoError(t, os.WriteFile(hintsDoc, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "%s is stale: run go test -run TestHintsDoc -update-docs .", hintsDoc)
}

// The README's Go example is examples/subarray/main.go, which builds.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	example, err := os.ReadFile("examples/subarray/main.go")
	require.NoError(t, err)
	require.Contains(t, string(readme), "```go\n"+string(example)+"```", "README example differs from examples/subarray/main.go")
}
