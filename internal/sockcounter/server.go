package sockcounter

import (
	"crypto/subtle"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"
)

// server is rank 0's side: the value, and a goroutine per connection that
// answers its requests in order. The value is under one mutex across
// connections, so every rank's Adds are atomic.
type server struct {
	ln    net.Listener
	token []byte
	proof []byte

	mu sync.Mutex   // the values
	v  [slots]int64 // the counter's own, then its siblings'

	connMu sync.Mutex // conns and closed
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup // the accept loop and the connections' goroutines
}

func newServer(ln net.Listener, token []byte, init int64) *server {
	s := &server{ln: ln, token: token, proof: proof(token), v: [slots]int64{init}, conns: make(map[net.Conn]bool)}
	s.wg.Add(1)
	go s.accept()
	return s
}

// apply changes the value of op's slot and returns the value before.
func (s *server) apply(op byte, v int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &s.v[op>>4]
	old := *x
	if op&0x0f == opSet {
		*x = v
	} else {
		*x += v
	}
	return old
}

// validOp reports whether a request's op byte is an operation on a slot
// the server has.
func validOp(op byte) bool {
	return (op&0x0f == opAdd || op&0x0f == opSet) && op>>4 < slots
}

// accept serves every connection until the listener is closed.
func (s *server) accept() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() {
				return
			}
			// Out of descriptors, say: wait rather than spin, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if !s.track(conn) {
			conn.Close()
			return
		}
		go s.serve(conn)
	}
}

// track records conn so that close can close it; false once closed.
func (s *server) track(conn net.Conn) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = true
	s.wg.Add(1)
	return true
}

func (s *server) isClosed() bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.closed
}

// serve checks the client's token, then answers its requests in order
// until it hangs up. A client with a wrong token is hung up on without
// an answer.
func (s *server) serve(conn net.Conn) {
	defer func() {
		conn.Close()
		s.connMu.Lock()
		delete(s.conns, conn)
		s.connMu.Unlock()
		s.wg.Done()
	}()
	token := make([]byte, tokenSize)
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := io.ReadFull(conn, token); err != nil || subtle.ConstantTimeCompare(token, s.token) != 1 {
		return
	}
	if _, err := conn.Write(s.proof); err != nil {
		return
	}
	// A client may stay idle for the counter's life.
	conn.SetDeadline(time.Time{})
	var b [requestSize]byte
	for {
		if _, err := io.ReadFull(conn, b[:]); err != nil || !validOp(b[0]) {
			return
		}
		old := s.apply(b[0], int64(binary.BigEndian.Uint64(b[1:])))
		binary.BigEndian.PutUint64(b[:replySize], uint64(old))
		if _, err := conn.Write(b[:replySize]); err != nil {
			return
		}
	}
}

// close stops the server: the listener and every connection are closed,
// and close returns once all of its goroutines have.
func (s *server) close() {
	s.connMu.Lock()
	if s.closed {
		s.connMu.Unlock()
		return
	}
	s.closed = true
	s.ln.Close()
	for conn := range s.conns {
		conn.Close()
	}
	s.connMu.Unlock()
	s.wg.Wait()
}
