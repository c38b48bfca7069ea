package collio_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/stretchr/testify/require"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's hint reference from the hints table")

const (
	hintsBegin = "<!-- hints:begin (generated from hints/table.go: go test -run TestReadmeHints -update-readme) -->\n"
	hintsEnd   = "<!-- hints:end -->"
)

// The README's hint reference is the hints table, generated.
func TestReadmeHints(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	s := string(b)
	i, j := strings.Index(s, hintsBegin), strings.Index(s, hintsEnd)
	require.True(t, i >= 0 && j > i, "README.md lacks the hint reference markers")
	want := s[:i+len(hintsBegin)] + hints.Markdown() + s[j:]
	if *updateReadme {
		require.NoError(t, os.WriteFile("README.md", []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "README hint reference is stale: run go test -run TestReadmeHints -update-readme .")
}

// The README's Go example is examples/subarray/main.go, which builds.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	example, err := os.ReadFile("examples/subarray/main.go")
	require.NoError(t, err)
	require.Contains(t, string(readme), "```go\n"+string(example)+"```", "README example differs from examples/subarray/main.go")
}
