// Package sockcounter is a comm.Counter that rank 0 serves over TCP: the
// shared file pointer where MPI one-sided communication is unavailable
// (Open MPI 4.1 over TCP across nodes has no MPI_Win_allocate).
//
// Rank 0 holds the value under a mutex and serves it from goroutines
// blocked in the Go netpoller: no CPU while idle, no MPI call, so it needs
// no MPI thread level and answers while the application's thread computes
// (on a core of its own, at once; on the core of a busy thread, once the
// scheduler switches, a fraction of a millisecond).
// Every other rank holds one connection to it for the counter's life.
//
// Wire protocol, after the handshake (the client sends the token, the
// server answers with proof that it knows it): a request of 9 bytes (op,
// with the value's slot in its high nibble, then an int64 big-endian), a
// reply of 8 bytes (the value before).
package sockcounter

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/comm"
)

const (
	tokenSize   = 32
	requestSize = 9
	replySize   = 8

	opAdd byte = 1
	opSet byte = 2

	// slots is how many values a server holds: the counter's own (0) and
	// its siblings'. A request's op byte carries the slot in its high
	// nibble.
	slots = 4
)

// proofLabel is what the server's proof is an HMAC of, keyed by the token.
const proofLabel = "collio sockcounter: the server knows the token"

// Timeouts, variables so that tests can shorten them.
var (
	// dialTimeout bounds connecting to one of rank 0's addresses: an
	// address of another network fails fast and the next one is tried.
	dialTimeout = time.Second
	// handshakeTimeout bounds the wait for the proof once connected (and
	// the server's wait for a token). Longer than dialTimeout: rank 0's
	// server may share a busy core with ranks polling in MPI.
	handshakeTimeout = 5 * time.Second
	// requestTimeout bounds one Add or Set: an error instead of a hang
	// when rank 0 is stopped or its node is unreachable.
	requestTimeout = 60 * time.Second
)

// Test hooks: listen is how rank 0 listens; testAddrs, if set, changes
// the addresses (host:port) a rank dials.
var (
	listen    = net.Listen
	testAddrs func(rank int, addrs []string) []string
)

var errFreed = errors.New("sockcounter: the counter has been freed")

// counter is one rank's handle: rank 0 holds the server and changes the
// value directly; every other rank talks to it over conn.
type counter struct {
	c     comm.Comm
	srv   *server
	freed atomic.Bool
	*link
	// slot is the value this handle changes; owner is the counter a
	// sibling (slot > 0) was made from, nil for the counter itself.
	slot  byte
	owner *counter
}

// link is a rank's connection to rank 0's server, shared by a counter and
// its siblings.
type link struct {
	mu     sync.Mutex // one request at a time on conn
	conn   net.Conn
	addr   string // rank 0's address that conn reached
	broken error  // set when conn failed: its stream may be out of step
}

// New makes a counter holding init over c's ranks, served by rank 0
// (collective). It fails on every rank or on none.
func New(c comm.Comm, init int64) (comm.Counter, error) {
	k := &counter{c: c, link: &link{}}
	var offer []byte
	var err error
	if c.Rank() == 0 {
		k.srv, offer, err = startServer(init)
	}
	offer, berr := bcastOffer(c, offer)
	if berr != nil {
		k.release()
		return nil, fmt.Errorf("sockcounter: broadcasting rank 0's address: %w", berr)
	}
	if c.Rank() != 0 {
		if len(offer) == 0 {
			// Rank 0's own error is the one agreed on below.
			err = errors.New("sockcounter: rank 0 could not serve the counter")
		} else {
			k.conn, k.addr, err = dial(c.Rank(), offer)
		}
	}
	if err := agree.Errors(c, err); err != nil {
		k.release()
		return nil, err
	}
	return k, nil
}

// bcastOffer gives every rank rank 0's offer (its length first: only rank
// 0 knows it). An empty offer means that rank 0 failed.
func bcastOffer(c comm.Comm, offer []byte) ([]byte, error) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(offer)))
	if err := c.Bcast(n[:], 0); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		offer = make([]byte, binary.BigEndian.Uint64(n[:]))
	}
	if len(offer) == 0 {
		return nil, nil
	}
	return offer, c.Bcast(offer, 0)
}

// makeOffer packs what clients need: the port, the token, then rank 0's
// addresses one a line.
func makeOffer(port int, token []byte, ips []string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(port))
	b = append(b, token...)
	return append(b, strings.Join(ips, "\n")...)
}

// readOffer unpacks makeOffer's result into addresses (host:port) and the
// token.
func readOffer(b []byte) (addrs []string, token []byte, err error) {
	if len(b) < 2+tokenSize {
		return nil, nil, fmt.Errorf("sockcounter: rank 0's offer has %d bytes, fewer than %d", len(b), 2+tokenSize)
	}
	port := strconv.Itoa(int(binary.BigEndian.Uint16(b)))
	for _, ip := range strings.Split(string(b[2+tokenSize:]), "\n") {
		if ip != "" {
			addrs = append(addrs, net.JoinHostPort(ip, port))
		}
	}
	return addrs, b[2 : 2+tokenSize], nil
}

// localIPs lists the unicast addresses of this host's up interfaces that
// another node may reach, loopback last (for ranks on this node).
func localIPs() ([]string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var ips, loopback []string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue // an interface gone since the listing
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			switch offered(ipn.IP) {
			case offerFirst:
				ips = append(ips, ipn.IP.String())
			case offerLast:
				loopback = append(loopback, ipn.IP.String())
			}
		}
	}
	return append(ips, loopback...), nil
}

// Where an address goes in rank 0's offer.
const (
	offerNot   = iota
	offerFirst // may reach rank 0 from another node
	offerLast  // loopback: from rank 0's node only
)

// offered places ip in the offer. IPv4 link-local addresses are offered
// (some clusters use only those); IPv6 link-local ones are not: dialing
// them needs the interface's zone, which differs by node.
func offered(ip net.IP) int {
	switch {
	case ip.IsLoopback():
		return offerLast
	case ip.IsMulticast() || ip.IsUnspecified():
		return offerNot
	case ip.To4() == nil && ip.IsLinkLocalUnicast():
		return offerNot
	default:
		return offerFirst
	}
}

// proof is what the server answers to token: only a holder of the token
// can make it, and it is not the token itself (an echo service fails).
func proof(token []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(proofLabel))
	return m.Sum(nil)
}

// dial connects to the first of rank 0's addresses that proves it is the
// counter's server.
func dial(rank int, offer []byte) (net.Conn, string, error) {
	addrs, token, err := readOffer(offer)
	if err != nil {
		return nil, "", err
	}
	if testAddrs != nil {
		addrs = testAddrs(rank, addrs)
	}
	var failed []string
	for _, addr := range addrs {
		conn, err := handshake(addr, token)
		if err == nil {
			return conn, addr, nil
		}
		failed = append(failed, fmt.Sprintf("%s: %v", addr, err))
	}
	if len(failed) == 0 {
		return nil, "", fmt.Errorf("sockcounter: rank %d: rank 0 offered no address for the counter", rank)
	}
	return nil, "", fmt.Errorf("sockcounter: rank %d could not reach rank 0's counter server at any of its addresses (%s)",
		rank, strings.Join(failed, "; "))
}

// handshake connects to addr, presents token and checks the server's proof.
func handshake(addr string, token []byte) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return nil, reason(err)
	}
	got := make([]byte, sha256.Size)
	err = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err == nil {
		_, err = conn.Write(token)
	}
	if err == nil {
		_, err = io.ReadFull(conn, got)
	}
	switch {
	case err != nil:
		err = fmt.Errorf("no answer to the token: %v", reason(err))
	case subtle.ConstantTimeCompare(got, proof(token)) != 1:
		err = errors.New("the service there is not this counter's server")
	default:
		err = conn.SetDeadline(time.Time{})
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// reason shortens a network error to its cause ("connection refused"),
// since the address is named beside it.
func reason(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		err = sys.Err
	}
	return err
}

// Sibling returns a handle on value i (1 to 3) of the same server,
// beside the counter's own: it makes no collective call and no
// connection, starts at 0, and lives as long as the counter (its Free is
// local). The k-th Sibling(i) of every rank is the same value.
func (k *counter) Sibling(i int) comm.Counter {
	if i < 1 || i >= slots || k.owner != nil {
		panic(fmt.Sprintf("sockcounter: Sibling(%d) of a counter with %d values", i, slots))
	}
	return &counter{c: k.c, srv: k.srv, link: k.link, slot: byte(i), owner: k}
}

// gone reports whether the counter, or the one a sibling was made from,
// has been freed.
func (k *counter) gone() bool {
	return k.freed.Load() || (k.owner != nil && k.owner.freed.Load())
}

// Add adds delta and returns the value before.
func (k *counter) Add(delta int64) (int64, error) {
	if k.gone() {
		return 0, errFreed
	}
	if k.srv != nil {
		return k.srv.apply(opAdd|k.slot<<4, delta), nil
	}
	return k.request(opAdd|k.slot<<4, delta)
}

// Concurrent marks the counter a comm.ConcurrentCounter: requests go one
// at a time over the connection (mu), with no MPI call.
func (k *counter) Concurrent() {}

// Set stores v.
func (k *counter) Set(v int64) error {
	if k.gone() {
		return errFreed
	}
	if k.srv != nil {
		k.srv.apply(opSet|k.slot<<4, v)
		return nil
	}
	_, err := k.request(opSet|k.slot<<4, v)
	return err
}

// Free releases the counter (collective): after a barrier, so that no rank
// still uses it, clients close their connections and rank 0 its server.
func (k *counter) Free() error {
	if k.freed.Swap(true) {
		return errFreed
	}
	if k.owner != nil {
		return nil // a sibling: the counter it was made from holds the server
	}
	err := k.c.Barrier()
	k.release()
	return err
}

// release closes this rank's side.
func (k *counter) release() {
	if k.srv != nil {
		k.srv.close()
	}
	if k.conn != nil {
		k.conn.Close()
	}
}

// request sends one request to rank 0 and returns its reply.
func (k *counter) request(op byte, v int64) (int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.broken != nil {
		return 0, k.broken
	}
	var b [requestSize]byte
	b[0] = op
	binary.BigEndian.PutUint64(b[1:], uint64(v))
	err := k.conn.SetDeadline(time.Now().Add(requestTimeout))
	if err == nil {
		_, err = k.conn.Write(b[:])
	}
	if err == nil {
		_, err = io.ReadFull(k.conn, b[:replySize])
	}
	if err != nil {
		k.broken = k.lost(err)
		return 0, k.broken
	}
	return int64(binary.BigEndian.Uint64(b[:replySize])), nil
}

// lost explains a failed request. The connection is not used again: a
// late reply would be taken for the next request's.
func (k *counter) lost(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("sockcounter: rank 0's counter server at %s did not answer within %v", k.addr, requestTimeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("sockcounter: rank 0's counter server at %s closed the connection (rank 0 exited or freed the counter): %v", k.addr, reason(err))
	default:
		return fmt.Errorf("sockcounter: talking to rank 0's counter server at %s: %v", k.addr, reason(err))
	}
}

// startServer listens on every interface and serves a counter holding
// init; it returns the offer to broadcast.
func startServer(init int64) (*server, []byte, error) {
	token := make([]byte, tokenSize)
	if _, err := rand.Read(token); err != nil {
		return nil, nil, fmt.Errorf("sockcounter: rank 0 could not make a token: %w", err)
	}
	ips, err := localIPs()
	if err != nil {
		return nil, nil, fmt.Errorf("sockcounter: rank 0 could not list its network addresses: %w", err)
	}
	ln, err := listen("tcp", ":0")
	if err != nil {
		return nil, nil, fmt.Errorf("sockcounter: rank 0 could not listen on TCP: %w", err)
	}
	s := newServer(ln, token, init)
	return s, makeOffer(ln.Addr().(*net.TCPAddr).Port, token, ips), nil
}
