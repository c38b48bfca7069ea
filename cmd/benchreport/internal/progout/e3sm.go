package progout

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// E3SMFile is e3sm_io's report of one output file: its name as cbench
// shows it (h0, h1, or "file" for the G case's one file), the MiB written,
// and the maxima over ranks of the flush and end-to-end times, as printed.
type E3SMFile struct {
	Name            string
	MiB, Flush, E2E string
}

// E3SM is one e3sm_io launch: the status and the report of each file.
type E3SM struct {
	Status string
	Files  []E3SMFile
}

// e3smError is an error or a crash in e3sm_io's output: "Error" or
// "ERROR" as a word, an MPI abort, a signal.
var e3smError = regexp.MustCompile(`(^|[^A-Za-z_])(Error|ERROR)([^A-Za-z_]|$)|MPI_ABORT|[Ss]egmentation fault|core dumped`)

// ParseE3SM reads e3sm_io's report: per output file, "History output
// file = <path>" (or another "... output file = "), then "Total write
// amount = X MiB", "Time of write flushing min/max = a / b" and
// "end-to-end time min/max = a / b".
func ParseE3SM(out []byte, rc int) E3SM {
	var r E3SM
	errs := false
	for sc := lines(out); sc.Scan(); {
		line := sc.Text()
		if e3smError.MatchString(line) {
			errs = true
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		last := f[len(f)-1]
		n := len(r.Files)
		switch {
		case isOutputFileLine(line):
			r.Files = append(r.Files, E3SMFile{Name: e3smName(last)})
		case n == 0:
		case strings.Contains(line, "Total write amount"):
			for i := 0; i < len(f)-1; i++ {
				if f[i] == "=" {
					r.Files[n-1].MiB = f[i+1]
					break
				}
			}
		case strings.Contains(line, "Time of write flushing"):
			r.Files[n-1].Flush = last
		case strings.Contains(line, "end-to-end time"):
			r.Files[n-1].E2E = last
		}
	}
	r.Status = exitStatus(rc)
	switch {
	case r.Status != "":
	case len(r.Files) == 0:
		r.Status = NoOutput
	case errs:
		r.Status = ErrorInOutput
	default:
		r.Status = OK
	}
	if r.Status == OK {
		for _, f := range r.Files {
			if f.Flush == "" || f.E2E == "" || f.MiB == "" {
				r.Status = NoOutput
			}
		}
	}
	return r
}

// isOutputFileLine: "output file", any spaces, then "=".
func isOutputFileLine(line string) bool {
	i := strings.Index(line, "output file")
	return i >= 0 && strings.HasPrefix(strings.TrimLeft(line[i+len("output file"):], " "), "=")
}

// e3smName turns DIR/out_h0.nc into h0, DIR/out.nc into "file".
func e3smName(p string) string {
	n := strings.TrimSuffix(path.Base(p), ".nc")
	if strings.HasPrefix(n, "out") {
		n = strings.TrimPrefix(strings.TrimPrefix(n, "out"), "_")
	}
	if n == "" {
		n = "file"
	}
	return n
}

// Summary is the launch's figures over its complete files: the summed
// flush and end-to-end times, the MiB, open-to-close MiB/s (MiB over the
// summed end-to-end times; for one file e3sm_io's own figure) and the
// per-file flush times "h0=0.2837,h1=0.0034", formatted as cbench records
// them; "-" where there is nothing.
func (r E3SM) Summary() (flush, files, e2e, mib, otc string) {
	if r.Status != OK && len(r.Files) == 0 {
		return "-", "-", "-", "-", "-"
	}
	var F, E, M float64
	var list []string
	for _, f := range r.Files {
		if f.Flush == "" || f.E2E == "" || f.MiB == "" {
			continue
		}
		F += num(f.Flush)
		E += num(f.E2E)
		M += num(f.MiB)
		list = append(list, f.Name+"="+f.Flush)
	}
	files, otc = "-", "-"
	if len(list) > 0 {
		files = strings.Join(list, ",")
	}
	if E > 0 {
		otc = fmt.Sprintf("%.2f", M/E)
	}
	return fmt.Sprintf("%.4f", F), files, fmt.Sprintf("%.4f", E), fmt.Sprintf("%.2f", M), otc
}

// num reads a printed number as awk does: what does not parse is 0.
func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return v
}
