package layout

import "github.com/collio/collio/internal/ioerr"

// argErr reports a bad count, length or index argument.
func argErr(op, format string, args ...any) error {
	return ioerr.New(ioerr.ErrArg, op, format, args...)
}

// typeErr reports a bad datatype argument (nil type, bad order...).
func typeErr(op, format string, args ...any) error {
	return ioerr.New(ioerr.ErrType, op, format, args...)
}

// errTooLarge is returned when offsets or sizes would overflow int64.
func errTooLarge(op string) error {
	return ioerr.New(ioerr.ErrArg, op, "type too large: offsets or sizes overflow 64 bits")
}
