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

// The Go examples shown in the docs are the programs under examples/, which
// build.
func TestDocsExamples(t *testing.T) {
	for _, c := range []struct{ doc, example string }{
		{"docs/go.md", "examples/subarray/main.go"},
	} {
		doc, err := os.ReadFile(c.doc)
		require.NoError(t, err)
		example, err := os.ReadFile(c.example)
		require.NoError(t, err)
		require.Contains(t, string(doc), "```go\n"+string(example)+"```", "the example in %s differs from %s", c.doc, c.example)
	}
}
