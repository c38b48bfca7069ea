package ioserver

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/ioerr"
)

// Tags of the server communicator (a private duplicate, so they meet no
// other traffic).
const (
	tagCtrl  = 1 // client → server: requests
	tagReply = 2 // server → client: credit and answers
	tagData  = 3 // client → server: the bytes of granted credit
)

// kind is a request's operation.
type kind uint32

const (
	kOpen kind = iota + 1
	kWrite
	kRead
	kSync
	kClose
	kSize
	kTruncate
	kAllocate
	kStop
	kStats
	kReadV
)

var kindNames = map[kind]string{kOpen: "open", kWrite: "write", kRead: "read", kSync: "sync", kClose: "close",
	kSize: "size", kTruncate: "truncate", kAllocate: "allocate", kStop: "stop", kStats: "stats", kReadV: "readv"}

func (k kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", uint32(k))
}

// request is the fixed part of a client's message; open carries its
// arguments after it.
type request struct {
	Kind   kind
	Src    int32  // the client's rank in the server communicator
	Handle uint64 // the server's file handle (from open)
	Off    int64
	N      int64
}

const requestLen = 32

func (r request) encode(payload []byte) []byte {
	b := make([]byte, requestLen, requestLen+len(payload))
	binary.LittleEndian.PutUint32(b[0:], uint32(r.Kind))
	binary.LittleEndian.PutUint32(b[4:], uint32(r.Src))
	binary.LittleEndian.PutUint64(b[8:], r.Handle)
	binary.LittleEndian.PutUint64(b[16:], uint64(r.Off))
	binary.LittleEndian.PutUint64(b[24:], uint64(r.N))
	return append(b, payload...)
}

func decodeRequest(b []byte) (request, []byte, error) {
	if len(b) < requestLen {
		return request{}, nil, fmt.Errorf("ioserver: request of %d bytes, shorter than its header", len(b))
	}
	r := request{
		Kind:   kind(binary.LittleEndian.Uint32(b[0:])),
		Src:    int32(binary.LittleEndian.Uint32(b[4:])),
		Handle: binary.LittleEndian.Uint64(b[8:]),
		Off:    int64(binary.LittleEndian.Uint64(b[16:])),
		N:      int64(binary.LittleEndian.Uint64(b[24:])),
	}
	return r, b[requestLen:], nil
}

// reply is the fixed part of a server's answer: credit for a write (V[0]
// bytes), or an operation's outcome with up to three values, an error and,
// for reads, the bytes after it.
type reply struct {
	V     [3]int64
	Class int32 // 0: no error; else ioerr.Code of the error's class
	Text  string
}

const replyLen = 32

func (r reply) encode(data []byte) []byte {
	b := make([]byte, replyLen, replyLen+len(r.Text)+len(data))
	for i, v := range r.V {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	binary.LittleEndian.PutUint32(b[24:], uint32(r.Class))
	binary.LittleEndian.PutUint32(b[28:], uint32(len(r.Text)))
	b = append(b, r.Text...)
	return append(b, data...)
}

func decodeReply(b []byte) (reply, []byte, error) {
	if len(b) < replyLen {
		return reply{}, nil, fmt.Errorf("ioserver: reply of %d bytes, shorter than its header", len(b))
	}
	var r reply
	for i := range r.V {
		r.V[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	r.Class = int32(binary.LittleEndian.Uint32(b[24:]))
	n := int(binary.LittleEndian.Uint32(b[28:]))
	if len(b)-replyLen < n {
		return reply{}, nil, fmt.Errorf("ioserver: reply error text of %d bytes in a reply of %d", n, len(b))
	}
	r.Text = string(b[replyLen : replyLen+n])
	return r, b[replyLen+n:], nil
}

// maxErrText bounds an error's text in a reply, which the client
// receives into a buffer of fixed room.
const maxErrText = 2048

// withErr puts err in the reply.
func (r reply) withErr(err error) reply {
	if err != nil {
		r.Class = int32(ioerr.Code(ioerr.ClassOf(err)))
		r.Text = err.Error()
		if len(r.Text) > maxErrText {
			r.Text = r.Text[:maxErrText-3] + "..."
		}
	}
	return r
}

// err is the reply's error as the client sees it: the server's class and
// text.
func (r reply) err() error {
	if r.Class == 0 && r.Text == "" {
		return nil
	}
	return ioerr.Remote(ioerr.FromCode(int(r.Class)), "I/O server: "+r.Text)
}

// Extent is a range of the file a write covers.
type Extent struct{ Off, N int64 }

// maxExtents bounds the extents of one write request, so it fits the
// server's request buffer (ctrlMax).
const maxExtents = (ctrlMax - requestLen - 8) / 16

// encodeExtents is a write request's payload: the file ranges its bytes
// fill, in the order they are sent.
func encodeExtents(ext []Extent) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(ext)))
	for _, e := range ext {
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Off))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.N))
	}
	return b
}

// decodeExtents reads encodeExtents and checks that the extents are
// well formed and add up to total bytes.
func decodeExtents(b []byte, total int64) ([]Extent, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("ioserver: write request without its extents")
	}
	n := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if n == 0 || n > uint64(len(b)/16) {
		return nil, fmt.Errorf("ioserver: write request of %d extents in %d bytes", n, len(b))
	}
	ext := make([]Extent, n)
	sum := int64(0)
	for i := range ext {
		ext[i] = Extent{Off: int64(binary.LittleEndian.Uint64(b[16*i:])), N: int64(binary.LittleEndian.Uint64(b[16*i+8:]))}
		if ext[i].Off < 0 || ext[i].N <= 0 || ext[i].N > total {
			return nil, fmt.Errorf("ioserver: write extent of %d bytes at %d", ext[i].N, ext[i].Off)
		}
		sum += ext[i].N
	}
	if sum != total {
		return nil, fmt.Errorf("ioserver: write extents of %d bytes for %d", sum, total)
	}
	return ext, nil
}

// openArgs are what a server needs to open a file as the client would have.
type openArgs struct {
	Driver string // registered driver name
	Path   string // path without the driver prefix
	Flags  int
	Perm   os.FileMode
	Layout driver.Layout
	Params map[string]string
}

func putString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func (a openArgs) encode() []byte {
	var b []byte
	b = putString(b, a.Driver)
	b = putString(b, a.Path)
	for _, v := range []int64{int64(a.Flags), int64(a.Perm), a.Layout.StripeSize, int64(a.Layout.StripeCount), int64(a.Layout.StartTarget), int64(len(a.Params))} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	keys := make([]string, 0, len(a.Params))
	for k := range a.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b = putString(b, k)
		b = putString(b, a.Params[k])
	}
	return b
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) u64() int64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = fmt.Errorf("ioserver: open request cut short")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return int64(v)
}

func (d *decoder) str() string {
	if d.err != nil || len(d.b) < 4 {
		d.err = fmt.Errorf("ioserver: open request cut short")
		return ""
	}
	n := int(binary.LittleEndian.Uint32(d.b))
	if len(d.b)-4 < n {
		d.err = fmt.Errorf("ioserver: open request cut short")
		return ""
	}
	s := string(d.b[4 : 4+n])
	d.b = d.b[4+n:]
	return s
}

func decodeOpenArgs(b []byte) (openArgs, error) {
	d := decoder{b: b}
	a := openArgs{Driver: d.str(), Path: d.str()}
	a.Flags = int(d.u64())
	a.Perm = os.FileMode(d.u64())
	a.Layout = driver.Layout{StripeSize: d.u64(), StripeCount: int(d.u64()), StartTarget: int(d.u64())}
	n := d.u64()
	if d.err == nil && (n < 0 || n > int64(len(d.b))) {
		d.err = fmt.Errorf("ioserver: open request with %d parameters in %d bytes", n, len(d.b))
	}
	a.Params = make(map[string]string, max(n, 0))
	for range n {
		if d.err != nil {
			break
		}
		k := d.str()
		a.Params[k] = d.str()
	}
	return a, d.err
}
