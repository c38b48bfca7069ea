package mpi

// #cgo pkg-config: ompi-c
// #include <stdlib.h>
// #include <mpi.h>
// static MPI_Info collio_info_null(void) { return MPI_INFO_NULL; }
import "C"

import (
	"sort"
	"strings"
	"unsafe"

	"github.com/collio/collio/internal/ioerr"
)

// Info is an MPI_Info handle: string key/value pairs, used for hints.
// Info calls report errors through MPI_COMM_WORLD's handler (fatal by
// default), so keys, values and the handle are checked in Go first.
type Info struct {
	i C.MPI_Info
}

// The longest key and value MPI_Info_set accepts, in bytes. Open MPI
// counts the C terminator in MPI_MAX_INFO_KEY/VAL (measured: a 36-byte key
// and a 256-byte value are rejected).
const (
	MaxInfoKey = C.MPI_MAX_INFO_KEY - 1
	MaxInfoVal = C.MPI_MAX_INFO_VAL - 1
)

// InfoNull returns MPI_INFO_NULL.
func InfoNull() Info { return Info{C.collio_info_null()} }

// IsNull reports whether in is MPI_INFO_NULL.
func (in Info) IsNull() bool { return in.i == C.collio_info_null() }

// unusable also catches the zero Info (a nil handle), which MPI would
// reject through the fatal MPI_COMM_WORLD handler.
func (in Info) unusable() bool { return in.i == nil || in.IsNull() }

// InfoCreate is MPI_Info_create: an empty info object, to be freed.
func InfoCreate() (Info, error) {
	var i C.MPI_Info
	if err := check(C.MPI_Info_create(&i), "MPI_Info_create"); err != nil {
		return InfoNull(), err
	}
	return Info{i}, nil
}

// InfoFromMap creates an info object holding m; free it with Free.
func InfoFromMap(m map[string]string) (Info, error) {
	in, err := InfoCreate()
	if err != nil {
		return InfoNull(), err
	}
	for _, k := range sortedKeys(m) {
		if err := in.Set(k, m[k]); err != nil {
			_ = in.Free()
			return InfoNull(), err
		}
	}
	return in, nil
}

// Fint is MPI_Info_c2f.
func (in Info) Fint() int32 {
	if in.i == nil {
		return InfoNull().Fint() // the zero Info is no handle
	}
	return int32(C.MPI_Info_c2f(in.i))
}

// InfoFromFint is MPI_Info_f2c.
func InfoFromFint(f int32) Info { return Info{C.MPI_Info_f2c(C.MPI_Fint(f))} }

// Free is MPI_Info_free. Freeing MPI_INFO_NULL is an error.
func (in Info) Free() error {
	if in.unusable() {
		return errNullInfo("MPI_Info_free")
	}
	return check(C.MPI_Info_free(&in.i), "MPI_Info_free")
}

// Set is MPI_Info_set.
func (in Info) Set(key, value string) error {
	const op = "MPI_Info_set"
	if in.unusable() {
		return errNullInfo(op)
	}
	if err := checkInfoKey(op, key); err != nil {
		return err
	}
	if err := checkInfoValue(op, key, value); err != nil {
		return err
	}
	ck, cv := C.CString(key), C.CString(value)
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	return check(C.MPI_Info_set(in.i, ck, cv), op)
}

// Get is MPI_Info_get: the value of key and whether it is set.
func (in Info) Get(key string) (string, bool, error) {
	const op = "MPI_Info_get"
	if in.unusable() {
		return "", false, errNullInfo(op)
	}
	if err := checkInfoKey(op, key); err != nil {
		return "", false, err
	}
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var n, flag C.int
	if err := check(C.MPI_Info_get_valuelen(in.i, ck, &n, &flag), "MPI_Info_get_valuelen"); err != nil {
		return "", false, err
	}
	if flag == 0 {
		return "", false, nil
	}
	buf := make([]byte, int(n)+1)
	if err := check(C.MPI_Info_get(in.i, ck, n, (*C.char)(unsafe.Pointer(&buf[0])), &flag), op); err != nil {
		return "", false, err
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), flag != 0, nil
}

// Keys lists the keys in MPI's order (MPI_Info_get_nkeys/get_nthkey).
func (in Info) Keys() ([]string, error) {
	const op = "MPI_Info_get_nthkey"
	if in.unusable() {
		return nil, errNullInfo(op)
	}
	var n C.int
	if err := check(C.MPI_Info_get_nkeys(in.i, &n), "MPI_Info_get_nkeys"); err != nil {
		return nil, err
	}
	keys := make([]string, 0, int(n))
	buf := make([]byte, MaxInfoKey+1)
	for k := range int(n) {
		if err := check(C.MPI_Info_get_nthkey(in.i, C.int(k), (*C.char)(unsafe.Pointer(&buf[0]))), op); err != nil {
			return nil, err
		}
		keys = append(keys, C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
	}
	return keys, nil
}

// Map returns every key/value pair. MPI_INFO_NULL gives an empty map.
func (in Info) Map() (map[string]string, error) {
	m := map[string]string{}
	if in.unusable() {
		return m, nil
	}
	keys, err := in.Keys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		v, ok, err := in.Get(k)
		if err != nil {
			return nil, err
		}
		if ok {
			m[k] = v
		}
	}
	return m, nil
}

func errNullInfo(op string) error {
	return ioerr.New(ioerr.ErrArg, op, "info is MPI_INFO_NULL or not an info handle")
}

// checkInfoKey applies MPI's rules: non-empty, at most MaxInfoKey bytes,
// and no NUL (C strings end there).
func checkInfoKey(op, key string) error {
	switch {
	case key == "":
		return ioerr.New(ioerr.ErrArg, op, "empty info key")
	case len(key) > MaxInfoKey:
		return ioerr.New(ioerr.ErrArg, op, "info key %q is %d bytes, the limit is %d", key, len(key), MaxInfoKey)
	case strings.IndexByte(key, 0) >= 0:
		return ioerr.New(ioerr.ErrArg, op, "info key %q contains a NUL byte", key)
	}
	return nil
}

// checkInfoValue: Open MPI also rejects empty values.
func checkInfoValue(op, key, value string) error {
	switch {
	case value == "":
		return ioerr.New(ioerr.ErrArg, op, "empty value for info key %q", key)
	case len(value) > MaxInfoVal:
		return ioerr.New(ioerr.ErrArg, op, "value for info key %q is %d bytes, the limit is %d", key, len(value), MaxInfoVal)
	case strings.IndexByte(value, 0) >= 0:
		return ioerr.New(ioerr.ErrArg, op, "value for info key %q contains a NUL byte", key)
	}
	return nil
}

// sortedKeys makes the order of MPI_Info_set calls deterministic.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
