package hints

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Fprint writes the effective hints as an aligned table of key, value and
// source, sorted by key, followed by the warnings (what COLLIO_PRINT_HINTS=1
// shows at open).
func (s *Set) Fprint(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, k := range s.Keys() {
		e := s.entries[k]
		v := e.value
		if v == "" {
			v = `""`
		}
		src := e.source
		if _, known := Lookup(k); !known {
			src += " (unknown key, ignored)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k, v, src)
	}
	tw.Flush()
	for _, msg := range s.warnings {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}
}

// Markdown returns the hint reference table of docs/hints.md, generated
// from Table in table order.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| Hint | Values | Default | Must agree | Open only | Description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, spec := range Table {
		def := "—"
		if spec.Default != "" {
			def = "`" + spec.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n",
			spec.Key, markdownValues(spec), def, yesNo(spec.MustAgree), yesNo(spec.OpenOnly),
			escapeCell(doc(spec)))
	}
	return b.String()
}

// markdownValues describes the allowed values of spec for the reference.
func markdownValues(spec Spec) string {
	switch spec.Kind {
	case KindEnum:
		vals := make([]string, len(spec.Allowed))
		for i, a := range spec.Allowed {
			vals[i] = "`" + a + "`"
		}
		return strings.Join(vals, ", ")
	case KindBool:
		return "`true`, `false`"
	case KindInt:
		return "integer " + describeRange(spec)
	case KindSize:
		return "size " + describeRange(spec) + " (bytes; `k`/`m`/`g` suffixes)"
	case KindConfigList:
		return "list of `host:n`, `host:*`, `*:n`, `*:*`, `host`"
	}
	return spec.Kind.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// escapeCell keeps a table cell on one line and its pipes literal.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// doc is the description column: the hint's doc, and what is not in
// effect yet.
func doc(spec Spec) string {
	if spec.Pending == "" {
		return spec.Doc
	}
	return spec.Doc + " *Not in effect yet: " + spec.Pending + ".*"
}
