package hints

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Normalize validates value for spec and returns the effective value as it
// is stored and echoed: integers and sizes as plain decimal integers, enum
// and bool values lower-case, config lists in canonical form. value must
// already be trimmed. The error message names the key, the value and what
// is allowed; it carries no class (callers add ioerr.ErrBadHint).
func Normalize(spec Spec, value string) (string, error) {
	if value == "" && spec.Default == "" {
		// "No value" is the default of such hints; accepting it lets the
		// echoed hints (File.Info) be passed back to open.
		return "", nil
	}
	switch spec.Kind {
	case KindInt:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || !inRange(spec, n) {
			return "", badValue(spec, value, "")
		}
		return strconv.FormatInt(n, 10), nil
	case KindSize:
		n, err := ParseSize(value)
		if err != nil {
			return "", badValue(spec, value, err.Error())
		}
		if !inRange(spec, n) {
			return "", badValue(spec, value, "")
		}
		return strconv.FormatInt(n, 10), nil
	case KindEnum:
		v := strings.ToLower(value)
		for _, a := range spec.Allowed {
			if v == a {
				return v, nil
			}
		}
		return "", badValue(spec, value, "")
	case KindBool:
		v := strings.ToLower(value)
		if v == True || v == False {
			return v, nil
		}
		return "", badValue(spec, value, "")
	case KindString:
		return value, nil
	case KindConfigList:
		entries, err := ParseConfigList(value)
		if err != nil {
			return "", badValue(spec, value, err.Error())
		}
		return FormatConfigList(entries), nil
	}
	return "", fmt.Errorf("hint %s: unknown kind %d in the hint table", spec.Key, spec.Kind)
}

// ParseSize parses a byte count: a decimal integer, optionally followed by
// k, m or g (powers of 1024, case-insensitive).
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("too large")
		}
		return 0, fmt.Errorf("not a size")
	}
	if n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, fmt.Errorf("too large")
	}
	return n * mult, nil
}

func inRange(spec Spec, n int64) bool {
	return n >= spec.Min && (spec.Max == 0 || n <= spec.Max)
}

// badValue formats the one error shape every invalid value gets:
// hint KEY="VALUE": [detail; ]allowed values are ...
func badValue(spec Spec, value, detail string) error {
	if detail != "" {
		detail += "; "
	}
	return fmt.Errorf("hint %s=%q: %sallowed values are %s", spec.Key, value, detail, describeAllowed(spec))
}

// describeAllowed says in words what values spec accepts.
func describeAllowed(spec Spec) string {
	switch spec.Kind {
	case KindInt:
		return "integers " + describeRange(spec)
	case KindSize:
		return "sizes in bytes " + describeRange(spec) + " (an integer, optionally with suffix k, m or g)"
	case KindEnum:
		return strings.Join(spec.Allowed, ", ")
	case KindBool:
		return True + ", " + False
	case KindString:
		return "any string"
	case KindConfigList:
		return "comma-separated entries host:n, host:*, *:n, *:* or host, with n >= 1"
	}
	return "none"
}

func describeRange(spec Spec) string {
	if spec.Max == 0 {
		return fmt.Sprintf(">= %d", spec.Min)
	}
	return fmt.Sprintf("from %d to %d", spec.Min, spec.Max)
}
