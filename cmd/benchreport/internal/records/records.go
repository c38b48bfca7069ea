// Package records reads and writes the per-launch records of cbench: one
// tab-separated line per launch under a header that names the columns.
// Readers find columns by name, so a launcher can add measured columns
// (say, the bytes a launch put on the network) without breaking them.
package records

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Row is one launch: column name to value.
type Row map[string]string

// Get is the row's value of col, "-" when it has none.
func (r Row) Get(col string) string {
	if v, ok := r[col]; ok && v != "" {
		return v
	}
	return "-"
}

// The columns of cbench.tsv (the C programs and IOR) and of
// cbench-e3sm.tsv. Extra measured columns go before "log".
var (
	Columns = []string{"seq", "round", "program", "dir", "np", "size", "calls", "variant", "status", "rc", "seconds",
		"write_MiBs", "read_MiBs", "write_us", "read_us", "log", "command"}
	E3SMColumns = []string{"seq", "round", "case", "dir", "np", "variant", "status", "rc", "seconds",
		"flush_s", "flush_files", "e2e_s", "MiB", "otc_MiBs", "cmp", "ncvalidator", "log", "command"}
)

// WithExtra is cols with the extra columns inserted before "log".
func WithExtra(cols, extra []string) []string {
	i := slices.Index(cols, "log")
	if i < 0 {
		i = len(cols)
	}
	return slices.Concat(cols[:i], extra, cols[i:])
}

// Writer writes rows under a header. Each row is written as it comes (a
// long run leaves the launches so far if it is stopped).
type Writer struct {
	w    io.Writer
	cols []string
}

// NewWriter writes the header of cols.
func NewWriter(w io.Writer, cols []string) (*Writer, error) {
	_, err := fmt.Fprintln(w, strings.Join(cols, "\t"))
	return &Writer{w: w, cols: cols}, err
}

// Write writes r's values in the header's order; tabs and newlines in
// values become spaces.
func (w *Writer) Write(r Row) error {
	f := make([]string, len(w.cols))
	for i, c := range w.cols {
		f[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(r.Get(c))
	}
	_, err := fmt.Fprintln(w.w, strings.Join(f, "\t"))
	return err
}

// Read reads a header and its rows.
func Read(r io.Reader) (cols []string, rows []Row, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = f
			continue
		}
		if len(f) == 1 && f[0] == "" {
			continue
		}
		if len(f) != len(cols) {
			return nil, nil, fmt.Errorf("line %d: %d fields under a header of %d", n, len(f), len(cols))
		}
		row := Row{}
		for i, c := range cols {
			row[c] = f[i]
		}
		rows = append(rows, row)
	}
	return cols, rows, sc.Err()
}
