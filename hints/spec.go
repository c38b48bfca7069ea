package hints

// Kind says how a hint's value is parsed and validated.
type Kind int

const (
	// KindInt is a plain decimal integer within [Min, Max].
	KindInt Kind = iota
	// KindSize is a byte count within [Min, Max]: a plain integer or, as a
	// collio extension, one with a k, m or g suffix (powers of 1024,
	// case-insensitive). The effective value is the plain integer.
	KindSize
	// KindEnum is one of Allowed (case-insensitive, echoed lower-case).
	KindEnum
	// KindBool is true or false (case-insensitive, echoed lower-case).
	KindBool
	// KindString is any string.
	KindString
	// KindConfigList is ROMIO's cb_config_list grammar (see ParseConfigList).
	KindConfigList
)

func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindSize:
		return "size"
	case KindEnum:
		return "enum"
	case KindBool:
		return "bool"
	case KindString:
		return "string"
	case KindConfigList:
		return "config list"
	}
	return "unknown"
}

// Spec declares one hint.
type Spec struct {
	Key     string
	Kind    Kind
	Default string // "" = no value until one is derived (for example at open)
	Allowed []string
	// Min and Max bound KindInt and KindSize values. Max == 0 means no
	// upper bound.
	Min, Max int64
	// MustAgree: every rank must hold the same effective value (CheckSame).
	MustAgree bool
	// OpenOnly: only honoured at open; later changes (set_view, set_info)
	// are ignored with a warning.
	OpenOnly bool
	Doc      string
	// Pending says what is not in effect yet for a hint that is accepted,
	// validated and echoed but whose consumer has not landed ("" = in
	// effect). docs/hints.md shows it, so users know what works.
	Pending string
}
