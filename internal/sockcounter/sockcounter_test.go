package sockcounter

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
)

// setHook sets *p to v for the test's duration.
func setHook[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Many goroutines on every rank add at once: the values before each add
// are init, init+1, ... exactly once each, and the final value is the sum.
func TestConcurrentAddsLoseNothing(t *testing.T) {
	const ranks, goroutines, adds, init = 4, 8, 100, 1000
	const total = ranks * goroutines * adds
	var seen [total]atomic.Int32
	require.NoError(t, comm.RunWorldTimeout(ranks, 0, time.Minute, func(c comm.Comm) error {
		k, err := New(c, init)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for range goroutines {
			wg.Go(func() {
				for range adds {
					old, err := k.Add(1)
					if err == nil && (old < init || old >= init+total) {
						err = fmt.Errorf("Add gave %d, outside [%d, %d)", old, init, init+total)
					}
					if err != nil {
						errs <- err
						return
					}
					seen[old-init].Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if v, err := k.Add(0); err != nil || v != init+total {
			return fmt.Errorf("counter %d (%v) after all adds, want %d", v, err, init+total)
		}
		return k.Free()
	}))
	for i := range seen {
		require.EqualValues(t, 1, seen[i].Load(), "value %d seen before an add", init+i)
	}
}

// A Set from any rank is what every rank's next Add starts from.
func TestSetThenAdd(t *testing.T) {
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		k, err := New(c, 5)
		if err != nil {
			return err
		}
		for _, setter := range []int{1, 0} {
			want := int64(100 * (setter + 1))
			if c.Rank() == setter {
				if err := k.Set(want); err != nil {
					return err
				}
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			old, err := k.Add(int64(c.Rank() + 1))
			if err != nil {
				return err
			}
			if old < want || old >= want+6 {
				return fmt.Errorf("after rank %d's Set(%d), Add gave %d", setter, want, old)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if v, err := k.Add(0); err != nil || v != want+6 {
				return fmt.Errorf("counter %d (%v), want %d", v, err, want+6)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		return k.Free()
	}))
}

// A sibling is another value on the same server and connections: its
// adds and sets leave the counter's own value alone, every rank's handle
// meets the same value, and freeing the counter frees its siblings.
func TestSiblings(t *testing.T) {
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		k, err := New(c, 7)
		if err != nil {
			return err
		}
		sib := k.(comm.CounterSiblings)
		a, b := sib.Sibling(1), sib.Sibling(3)
		for _, x := range []comm.Counter{a, b, a} {
			if _, err := x.Add(int64(c.Rank() + 1)); err != nil {
				return err
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		for _, w := range []struct {
			x    comm.Counter
			want int64
		}{{k, 7}, {a, 12}, {b, 6}} {
			if v, err := w.x.Add(0); err != nil || v != w.want {
				return fmt.Errorf("rank %d: value %d (%v), want %d", c.Rank(), v, err, w.want)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := a.Free(); err != nil {
			return fmt.Errorf("a sibling's Free: %w", err)
		}
		if _, err := b.Add(0); err != nil {
			return fmt.Errorf("another sibling after one was freed: %w", err)
		}
		if err := k.Free(); err != nil {
			return err
		}
		if _, err := b.Add(1); err == nil {
			return fmt.Errorf("a sibling of a freed counter still answered")
		}
		return nil
	}))
}

// A connection with a wrong token is closed without an answer; the
// counter goes on serving its ranks.
func TestWrongTokenRejected(t *testing.T) {
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		k, err := New(c, 0)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			port := k.(*counter).srv.ln.Addr().(*net.TCPAddr).Port
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				return err
			}
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Write(make([]byte, tokenSize)); err != nil {
				return err
			}
			got, err := io.ReadAll(conn)
			conn.Close()
			if len(got) != 0 || err != nil {
				return fmt.Errorf("a wrong token got %d bytes back (%v), want a hang-up", len(got), err)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if _, err := k.Add(1); err != nil {
			return err
		}
		return k.Free()
	}))
}

// A client moves past addresses where nothing listens and where another
// service answers (here one that echoes the token) to the real server.
func TestDialMovesPastOtherServices(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		for {
			conn, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				io.Copy(conn, conn)
			}()
		}
	}()
	refused := closedAddr(t)
	setHook(t, &testAddrs, func(rank int, addrs []string) []string {
		return append([]string{refused, echo.Addr().String()}, addrs...)
	})
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		k, err := New(c, 0)
		if err != nil {
			return err
		}
		if c.Rank() != 0 {
			if a := k.(*counter).addr; a == refused || a == echo.Addr().String() {
				return fmt.Errorf("rank %d settled on %s, not the counter's server", c.Rank(), a)
			}
		}
		if _, err := k.Add(1); err != nil {
			return err
		}
		return k.Free()
	}))
}

// A freed counter refuses every use, and its server no longer listens.
func TestFreedCounter(t *testing.T) {
	var addr atomic.Value
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		k, err := New(c, 0)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			addr.Store(k.(*counter).srv.ln.Addr().String())
		}
		if err := k.Free(); err != nil {
			return err
		}
		_, aerr := k.Add(1)
		for what, err := range map[string]error{"Add": aerr, "Set": k.Set(1), "Free": k.Free()} {
			if !errors.Is(err, errFreed) {
				return fmt.Errorf("%s on a freed counter: %v, want %v", what, err, errFreed)
			}
		}
		return nil
	}))
	_, err := net.DialTimeout("tcp", addr.Load().(string), time.Second)
	assert.Error(t, err, "rank 0 still listens after Free")
}

// newAll runs New on every rank of an n-rank world and returns each
// rank's error; the counters made are freed.
func newAll(t *testing.T, n int) []error {
	errs := make([]error, n)
	require.NoError(t, comm.RunWorldTimeout(n, 0, time.Minute, func(c comm.Comm) error {
		k, err := New(c, 0)
		errs[c.Rank()] = err
		if err != nil {
			return nil
		}
		return k.Free()
	}))
	return errs
}

// Rank 0's failure to listen is every rank's error.
func TestListenFailureAgreed(t *testing.T) {
	setHook(t, &listen, func(string, string) (net.Listener, error) {
		return nil, errors.New("no sockets today")
	})
	for r, err := range newAll(t, 3) {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "rank 0 could not listen on TCP: no sockets today", "rank %d", r)
	}
}

// One rank that reaches none of rank 0's addresses makes New fail on every
// rank, with the addresses tried and why; rank 0 stops listening.
func TestDialFailureAgreed(t *testing.T) {
	refused := closedAddr(t)
	var served atomic.Value
	setHook(t, &listen, func(network, addr string) (net.Listener, error) {
		ln, err := net.Listen(network, addr)
		if err == nil {
			served.Store(ln.Addr().(*net.TCPAddr).Port)
		}
		return ln, err
	})
	setHook(t, &testAddrs, func(rank int, addrs []string) []string {
		if rank == 2 {
			return []string{refused}
		}
		return addrs
	})
	for r, err := range newAll(t, 4) {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "rank 2 could not reach rank 0's counter server", "rank %d", r)
		assert.Contains(t, err.Error(), refused+": connection refused", "rank %d", r)
	}
	_, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", served.Load()), time.Second)
	assert.Error(t, err, "rank 0 still listens after New failed")
}

// fakeServer accepts one client, passes its handshake and then runs
// behave on the connection.
func fakeServer(t *testing.T, behave func(conn net.Conn)) (net.Conn, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		token := make([]byte, tokenSize)
		if _, err := io.ReadFull(conn, token); err != nil {
			return
		}
		if _, err := conn.Write(proof(token)); err != nil {
			return
		}
		behave(conn)
	}()
	conn, err := handshake(ln.Addr().String(), make([]byte, tokenSize))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn, ln.Addr().String()
}

// A request that rank 0 does not answer fails at the deadline, and the
// connection is not used again.
func TestRequestDeadline(t *testing.T) {
	setHook(t, &requestTimeout, 200*time.Millisecond)
	conn, addr := fakeServer(t, func(conn net.Conn) { io.Copy(io.Discard, conn) })
	k := &counter{link: &link{conn: conn, addr: addr}}
	start := time.Now()
	_, err := k.Add(1)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, err.Error(), "rank 0's counter server at "+addr+" did not answer within 200ms")
	assert.Equal(t, err, k.Set(3), "a later request on a failed connection")
}

// A request to a rank 0 that has gone names rank 0 and its address.
func TestServerGone(t *testing.T) {
	conn, addr := fakeServer(t, func(conn net.Conn) {})
	k := &counter{link: &link{conn: conn, addr: addr}}
	_, err := k.Add(1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 0's counter server at "+addr+" closed the connection")
}

// Rank 0 offers the addresses another node may reach, loopback last, and
// no IPv6 link-local address (it needs a zone).
func TestLocalIPs(t *testing.T) {
	ips, err := localIPs()
	require.NoError(t, err)
	require.NotEmpty(t, ips)
	loopback := false
	for _, s := range ips {
		ip := net.ParseIP(s)
		require.NotNil(t, ip, s)
		assert.False(t, ip.To4() == nil && ip.IsLinkLocalUnicast(), "IPv6 link-local %s offered", s)
		if ip.IsLoopback() {
			loopback = true
		} else {
			assert.False(t, loopback, "%s comes after a loopback address in %v", s, ips)
		}
	}
	assert.True(t, loopback, "no loopback address in %v", ips)
	assert.False(t, strings.Contains(strings.Join(ips, " "), "%"), "a zone in %v", ips)
}

// IPv4 link-local addresses are offered (the emulated cluster uses them),
// IPv6 link-local ones are not, loopback goes last.
func TestOffered(t *testing.T) {
	for s, want := range map[string]int{
		"192.0.2.2":   offerFirst,
		"169.254.3.4": offerFirst,
		"fd00::2":     offerFirst,
		"2001:db8::1": offerFirst,
		"fe80::1":     offerNot,
		"224.0.0.1":   offerNot,
		"0.0.0.0":     offerNot,
		"127.0.0.1":   offerLast,
		"::1":         offerLast,
	} {
		assert.Equal(t, want, offered(net.ParseIP(s)), s)
	}
}

// The offer carries the port, the token and every address.
func TestOfferRoundTrip(t *testing.T) {
	token := []byte(strings.Repeat("k", tokenSize))
	addrs, got, err := readOffer(makeOffer(4242, token, []string{"169.254.0.7", "fd00::2", "127.0.0.1"}))
	require.NoError(t, err)
	assert.Equal(t, token, got)
	assert.Equal(t, []string{"169.254.0.7:4242", "[fd00::2]:4242", "127.0.0.1:4242"}, addrs)
	_, _, err = readOffer(make([]byte, tokenSize))
	assert.Error(t, err)
}

// One Add from a client over loopback while rank 0 waits idle: the
// round trip through the kernel and both netpollers.
func BenchmarkClientAdd(b *testing.B) {
	require.NoError(b, comm.RunWorld(2, 0, func(c comm.Comm) error {
		k, err := New(c, 0)
		if err != nil {
			return err
		}
		if c.Rank() == 1 {
			b.ResetTimer()
			for range b.N {
				if _, err := k.Add(1); err != nil {
					return err
				}
			}
			b.StopTimer()
		}
		return k.Free()
	}))
}
