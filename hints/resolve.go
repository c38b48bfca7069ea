package hints

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/collio/collio/internal/ioerr"
)

// Options control Resolve.
type Options struct {
	// Getenv reads the environment (for ROMIO_HINTS); nil means os.Getenv.
	Getenv func(string) string
	// ReadFile reads the system hints file; nil means os.ReadFile.
	ReadFile func(name string) ([]byte, error)
	// Lenient drops invalid values (keeping the previous value) and reports
	// them in Set.Warnings instead of failing. The C interposer uses it
	// because MPI-IO implementations only ignore bad hints.
	Lenient bool
}

// Resolve computes the effective hints from, later winning: the table
// defaults, the system hints file named by $ROMIO_HINTS, and user. Every
// value of a declared key is validated; an invalid one is an error of
// class ioerr.ErrBadHint listing every problem found (or, with
// opts.Lenient, a warning). Keys and values are trimmed of spaces. Unknown
// keys are kept verbatim and otherwise ignored.
func Resolve(user map[string]string, opts Options) (*Set, error) {
	b := newBuilder(defaults(), opts.Lenient)
	b.applyFile(opts)
	b.applyUser(user, "")
	return b.finish()
}

// Update returns s with user's hints applied on top, as set_view and
// set_info do: values are validated like in Resolve, and a different value
// for an OpenOnly key is ignored with a warning since it only takes effect
// at open.
func (s *Set) Update(user map[string]string, lenient bool) (*Set, error) {
	b := newBuilder(s, lenient)
	b.applyUser(user, "after open")
	return b.finish()
}

// builder accumulates one resolution: a working copy of the entries, the
// warnings and, in strict mode, the problems that make it fail.
type builder struct {
	set      *Set
	lenient  bool
	problems []string
}

func newBuilder(from *Set, lenient bool) *builder {
	return &builder{set: from.clone(), lenient: lenient}
}

// defaults is the Set of table defaults.
func defaults() *Set {
	s := &Set{entries: make(map[string]entry, len(Table))}
	for _, spec := range Table {
		s.entries[spec.Key] = entry{value: spec.Default, source: SourceDefault, decl: true, kind: spec.Kind}
	}
	return s
}

// problem records an invalid input: a warning in lenient mode, an error
// otherwise.
func (b *builder) problem(msg string) {
	if b.lenient {
		b.set.warnings = append(b.set.warnings, msg+" (ignored)")
		return
	}
	b.problems = append(b.problems, msg)
}

func (b *builder) finish() (*Set, error) {
	if len(b.problems) > 0 {
		return nil, ioerr.New(ioerr.ErrBadHint, "", "%s", strings.Join(b.problems, "; "))
	}
	return b.set, nil
}

// applyFile merges the system hints file, if $ROMIO_HINTS names one. Like
// ROMIO, a file that cannot be read is ignored, but collio says so in a
// warning.
func (b *builder) applyFile(opts Options) {
	getenv, readFile := opts.Getenv, opts.ReadFile
	if getenv == nil {
		getenv = os.Getenv
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	name := strings.TrimSpace(getenv(EnvHintsFile))
	if name == "" {
		return
	}
	data, err := readFile(name)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			reason = "file does not exist"
		}
		b.set.warnings = append(b.set.warnings, fmt.Sprintf("%s=%s ignored: %s", EnvHintsFile, name, reason))
		return
	}
	lines, problems := parseHintsFile(name, data)
	for _, p := range problems {
		b.problem(p)
	}
	for _, l := range lines {
		b.apply(l.key, l.value, SourceFile, fmt.Sprintf("%s line %d: ", name, l.line), "")
	}
}

// applyUser merges the caller's hints in sorted key order, so that results
// and messages are deterministic. when is "" at open.
func (b *builder) applyUser(user map[string]string, when string) {
	raw := make([]string, 0, len(user))
	for k := range user {
		raw = append(raw, k)
	}
	sort.Strings(raw)
	seen := make(map[string]string, len(raw))
	for _, k := range raw {
		key := strings.TrimSpace(k)
		if first, dup := seen[key]; dup {
			b.problem(fmt.Sprintf("hint %q given twice (as %q and %q)", key, first, k))
			continue
		}
		seen[key] = k
		b.apply(key, user[k], SourceUser, "", when)
	}
}

// apply validates and stores one key/value pair. where prefixes messages
// (file and line); when is non-empty after open.
func (b *builder) apply(key, value, source, where, when string) {
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if key == "" {
		b.problem(fmt.Sprintf("%shint with an empty key (value %q)", where, value))
		return
	}
	spec, known := Lookup(key)
	if !known {
		b.set.entries[key] = entry{value: value, source: source, given: true}
		return
	}
	norm, err := Normalize(spec, value)
	if err != nil {
		b.problem(where + err.Error())
		return
	}
	old := b.set.entries[key]
	if when != "" && spec.OpenOnly {
		if norm != old.value {
			b.set.warnings = append(b.set.warnings,
				fmt.Sprintf("hint %s=%q ignored %s: it is only read at open (keeping %q)", key, value, when, old.value))
		}
		return
	}
	b.set.entries[key] = entry{value: norm, source: source, given: true, decl: true, kind: spec.Kind}
}
