package hints

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/collio/collio/internal/ioerr"
)

// Set is an immutable set of effective hints: one value for every declared
// key (its default unless given) plus the unknown keys the user gave.
type Set struct {
	entries  map[string]entry
	warnings []string
}

type entry struct {
	value  string
	source string // SourceDefault, SourceFile, SourceUser or SourceDerived
	given  bool   // set by the user or the hints file at some point
	// decl and kind: the key is in Table, of this kind (kept here so that
	// a typed read costs one map lookup).
	decl bool
	kind Kind
}

func (s *Set) clone() *Set {
	return &Set{entries: maps.Clone(s.entries), warnings: slices.Clone(s.warnings)}
}

// declared returns key's entry, panicking if key is not in Table or not of
// kind or orKind (anyKind: any): callers use the key constants, so this is a programming
// error, not bad user input.
func (s *Set) declared(key string, kind, orKind Kind) entry {
	e := s.entries[key]
	if !e.decl {
		panic(fmt.Sprintf("hints: %q is not a declared hint", key))
	}
	if kind != anyKind && e.kind != kind && e.kind != orKind {
		panic(fmt.Sprintf("hints: hint %s is of kind %v, not %v", key, e.kind, kind))
	}
	return e
}

// anyKind makes declared accept a hint of any kind. Two kind parameters,
// not a variadic list: these accessors run in every collective call, and
// a variadic slice escapes through the panic message.
const anyKind Kind = -1

// Int returns the value of an int or size hint; 0 when it has no value
// (cb_nodes before open).
func (s *Set) Int(key string) int64 {
	e := s.declared(key, KindInt, KindSize)
	n, _ := strconv.ParseInt(e.value, 10, 64) // validated when stored
	return n
}

// Enum returns the (lower-case) value of an enum hint.
func (s *Set) Enum(key string) string {
	return s.declared(key, KindEnum, KindEnum).value
}

// Bool returns the value of a bool hint.
func (s *Set) Bool(key string) bool {
	return s.declared(key, KindBool, KindBool).value == True
}

// String returns the effective value of any declared hint as echoed.
func (s *Set) String(key string) string {
	return s.declared(key, anyKind, anyKind).value
}

// IsSet reports whether key was given by the user or the hints file (even
// if a derived value replaced it since), as opposed to a table default.
// Unknown keys the user gave are set too.
func (s *Set) IsSet(key string) bool {
	return s.entries[key].given
}

// Source says where key's effective value comes from: SourceDefault,
// SourceFile, SourceUser or SourceDerived; "" if the set does not hold key.
func (s *Set) Source(key string) string {
	return s.entries[key].source
}

// With returns a copy of s where the declared key has the derived value
// (for example cb_nodes computed at open, or the striping the file system
// reports). The value is validated like a user's.
func (s *Set) With(key, value string) (*Set, error) {
	spec, ok := Lookup(key)
	if !ok {
		return nil, ioerr.New(ioerr.ErrArg, "", "hint %q is not declared, it cannot be derived", key)
	}
	norm, err := Normalize(spec, value)
	if err != nil {
		return nil, ioerr.New(ioerr.ErrBadHint, "", "derived %v", err)
	}
	c := s.clone()
	c.entries[key] = entry{value: norm, source: SourceDerived, given: s.entries[key].given, decl: true, kind: spec.Kind}
	return c, nil
}

// Map returns every effective value, defaults and unknown keys included:
// what File.Info returns. An empty value means "none yet" (cb_nodes before
// open, e10_cache_path unset); MPI_Info conversions may skip those.
func (s *Set) Map() map[string]string {
	m := make(map[string]string, len(s.entries))
	for k, e := range s.entries {
		m[k] = e.value
	}
	return m
}

// Keys returns every key the set holds, sorted.
func (s *Set) Keys() []string {
	return slices.Sorted(maps.Keys(s.entries))
}

// Warnings returns what was ignored while resolving: an unreadable hints
// file, and in lenient mode invalid values.
func (s *Set) Warnings() []string {
	return slices.Clone(s.warnings)
}

// WithWarning returns a copy of s that also carries warning (for example
// that cb_config_list matched no host), shown at open like the others.
func (s *Set) WithWarning(warning string) *Set {
	c := s.clone()
	c.warnings = append(c.warnings, warning)
	return c
}
