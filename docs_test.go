package collio_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/stretchr/testify/assert"
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

// The Go examples shown in the README and in docs/go.md are the programs
// under examples/, which build (and examples/quickstart has a test).
func TestDocsExamples(t *testing.T) {
	for _, c := range []struct{ doc, example string }{
		{"README.md", "examples/quickstart/main.go"},
		{"docs/go.md", "examples/subarray/main.go"},
	} {
		doc, err := os.ReadFile(c.doc)
		require.NoError(t, err)
		example, err := os.ReadFile(c.example)
		require.NoError(t, err)
		require.Contains(t, string(doc), "```go\n"+string(example)+"```", "the example in %s differs from %s", c.doc, c.example)
	}
}

// Every relative link in the README and under docs/ points at a file that
// exists and, for a Markdown file, at a heading it has.
func TestDocsLinks(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	notes, err := filepath.Glob("docs/*/*.md")
	require.NoError(t, err)
	files = append(append([]string{"README.md"}, files...), notes...)
	anchors := map[string]map[string]bool{} // Markdown file -> its heading anchors
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		a := map[string]bool{}
		seen := map[string]int{}
		for _, line := range proseLines(string(b)) {
			m := headingRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			slug := githubSlug(m[1])
			if n := seen[slug]; n > 0 {
				a[slug+"-"+strconv.Itoa(n)] = true
			} else {
				a[slug] = true
			}
			seen[slug]++
		}
		anchors[path] = a
		return a
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, line := range proseLines(string(b)) {
			for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.Join(filepath.Dir(file), path)
				}
				_, err := os.Stat(path)
				if !assert.NoError(t, err, "%s: link %q: no such file", file, target) {
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") {
					assert.True(t, anchorsOf(path)[anchor], "%s: link %q: %s has no heading #%s", file, target, path, anchor)
				}
			}
		}
	}
}

var (
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
	slugDropRE   = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
	mdLinkRE     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines returns the lines of a Markdown text outside fenced code blocks.
func proseLines(s string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// githubSlug is the anchor GitHub gives a heading: its text in lower case,
// punctuation dropped, spaces as hyphens.
func githubSlug(heading string) string {
	s := mdLinkRE.ReplaceAllString(heading, "$1")
	s = slugDropRE.ReplaceAllString(strings.ToLower(s), "")
	return strings.ReplaceAll(s, " ", "-")
}
