package hints

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFprint(t *testing.T) {
	s, err := Resolve(map[string]string{CBBufferSize: "1m", "app_key": "x"}, Options{Getenv: envWith("/no/such/file")})
	require.NoError(t, err)
	var b bytes.Buffer
	s.Fprint(&b)
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Regexp(t, `^KEY +VALUE +SOURCE$`, lines[0])
	assert.Len(t, lines, 1+len(Table)+1+1, "header, declared keys, unknown key, warning")
	assert.Regexp(t, `(?m)^cb_buffer_size +1048576 +user$`, out)
	assert.Regexp(t, `(?m)^cb_nodes +"" +default$`, out)
	assert.Regexp(t, `(?m)^app_key +x +user \(unknown key, ignored\)$`, out)
	assert.Contains(t, out, "warning: ROMIO_HINTS=/no/such/file ignored")
	// Aligned: the value column starts at the same offset on every row.
	col := strings.Index(lines[0], "VALUE")
	for _, l := range lines[1 : len(lines)-1] {
		assert.NotEqual(t, ' ', rune(l[col]), l)
		assert.Equal(t, ' ', rune(l[col-1]), l)
	}
}

func TestMarkdown(t *testing.T) {
	md := Markdown()
	assert.Equal(t, md, Markdown(), "deterministic")
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	require.Len(t, lines, 2+len(Table))
	assert.Equal(t, "| Hint | Values | Default | Must agree | Open only | Description |", lines[0])
	for i, spec := range Table {
		row := lines[2+i]
		assert.True(t, strings.HasPrefix(row, "| `"+spec.Key+"` |"), row)
		assert.Equal(t, 7, strings.Count(row, "|")-strings.Count(row, `\|`), "six cells: %s", row)
	}
	assert.Contains(t, md, "| `romio_cb_write` | `enable`, `disable`, `automatic` | `automatic` | yes | no |")
	assert.Contains(t, md, "| `cb_buffer_size` | size >= 1 (bytes; `k`/`m`/`g` suffixes) | `16777216` | yes | no |")
	assert.Contains(t, md, "| `cb_nodes` | integer >= 1 | — | yes | yes |")
}
