package comm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"pgregory.net/rapid"
)

// TestNonOvertakingPerSourceAndTag: messages of one (source, tag) arrive
// in send order whatever order the receiver drains the tags in, both when
// the sends come first (queued) and when the receives do (posted).
func TestNonOvertakingPerSourceAndTag(t *testing.T) {
	const msgs = 50
	for _, recvFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("recvFirst=%v", recvFirst), func(t *testing.T) {
			runRanks(t, 2, 0, func(c Comm) error {
				if c.Rank() == 0 {
					if recvFirst {
						if err := c.Barrier(); err != nil {
							return err
						}
					}
					var reqs []Request
					for i := range msgs {
						for tag := 1; tag <= 2; tag++ {
							r, err := c.Isend([]byte{byte(i), byte(tag)}, 1, tag)
							if err != nil {
								return err
							}
							reqs = append(reqs, r)
						}
					}
					if err := Waitall(reqs...); err != nil {
						return err
					}
					if !recvFirst {
						return c.Barrier()
					}
					return nil
				}
				if !recvFirst {
					if err := c.Barrier(); err != nil { // every send is queued by now
						return err
					}
				}
				bufs := make([][]byte, 0, 2*msgs)
				var reqs []Request
				for _, tag := range []int{2, 1} {
					for range msgs {
						b := make([]byte, 2)
						r, err := c.Irecv(b, 0, tag)
						if err != nil {
							return err
						}
						bufs, reqs = append(bufs, b), append(reqs, r)
					}
				}
				if recvFirst {
					if err := c.Barrier(); err != nil {
						return err
					}
				}
				if err := Waitall(reqs...); err != nil {
					return err
				}
				for k, b := range bufs {
					tag, i := 2-k/msgs, k%msgs
					if b[0] != byte(i) || b[1] != byte(tag) {
						return fmt.Errorf("receive %d of tag %d got message %d of tag %d", i, tag, b[0], b[1])
					}
				}
				return nil
			})
		})
	}
}

// TestAnySourceKeepsPerSenderOrder: rank 0 receives everything with
// AnySource; each sender's messages must still come in order.
func TestAnySourceKeepsPerSenderOrder(t *testing.T) {
	const per = 20
	runRanks(t, 5, 2, func(c Comm) error {
		if c.Rank() != 0 {
			for i := range per {
				r, err := c.Isend([]byte{byte(c.Rank()), byte(i)}, 0, 7)
				if err != nil {
					return err
				}
				if err := r.Wait(); err != nil {
					return err
				}
			}
			return nil
		}
		next := make([]int, c.Size())
		for range per * (c.Size() - 1) {
			b := make([]byte, 2)
			r, err := c.Irecv(b, AnySource, 7)
			if err != nil {
				return err
			}
			if err := r.Wait(); err != nil {
				return err
			}
			from, i := int(b[0]), int(b[1])
			if from < 1 || from >= c.Size() || i != next[from] {
				return fmt.Errorf("got message %d from rank %d, expected %d", i, from, next[from])
			}
			next[from]++
		}
		return nil
	})
}

func TestTruncateAndCount(t *testing.T) {
	runRanks(t, 2, 0, func(c Comm) error {
		if c.Rank() == 0 {
			for _, msg := range [][]byte{{1, 2, 3, 4, 5}, {9, 8}} {
				r, err := c.Isend(msg, 1, 0)
				if err != nil {
					return err
				}
				if err := r.Wait(); err != nil {
					return err
				}
			}
			return nil
		}
		long := make([]byte, 3)
		r, err := c.Irecv(long, 0, 0)
		if err != nil {
			return err
		}
		if err := errIs("long message", r.Wait(), ErrTruncate); err != nil {
			return err
		}
		if r.Count() != 3 || long[2] != 3 {
			return fmt.Errorf("truncated receive: count %d, buffer %v", r.Count(), long)
		}
		short := make([]byte, 10)
		r, err = c.Irecv(short, 0, 0)
		if err != nil {
			return err
		}
		if err := r.Wait(); err != nil {
			return err
		}
		if r.Count() != 2 {
			return fmt.Errorf("short receive count %d, want 2", r.Count())
		}
		return sameBytes("short receive", short[:2], []byte{9, 8})
	})
}

// TestIssendCompletesOnlyWhenReceivePosted: rank 1 posts its receive only
// after a barrier that rank 0 enters after testing its Issend, so the
// Issend cannot have completed yet; Isend completes at once.
func TestIssendCompletesOnlyWhenReceivePosted(t *testing.T) {
	runRanks(t, 2, 0, func(c Comm) error {
		if c.Rank() == 0 {
			ss, err := c.Issend([]byte{1}, 1, 3)
			if err != nil {
				return err
			}
			s, err := c.Isend([]byte{2}, 1, 4)
			if err != nil {
				return err
			}
			if done, _ := s.Test(); !done {
				return errors.New("Isend not complete without a receive")
			}
			if done, _ := ss.Test(); done {
				return errors.New("Issend complete before the receive was posted")
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			return ss.Wait()
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		b := make([]byte, 2)
		r1, err := c.Irecv(b[:1], 0, 3)
		if err != nil {
			return err
		}
		r2, err := c.Irecv(b[1:], 0, 4)
		if err != nil {
			return err
		}
		if err := Waitall(r1, r2); err != nil {
			return err
		}
		return sameBytes("received", b, []byte{1, 2})
	})
}

func TestRingAndSelfSend(t *testing.T) {
	runRanks(t, 7, 3, func(c Comm) error {
		n, me := c.Size(), c.Rank()
		in, self := make([]byte, 1), make([]byte, 1)
		rr, err := c.Irecv(in, (me+n-1)%n, 0)
		if err != nil {
			return err
		}
		rs, err := c.Irecv(self, me, 1)
		if err != nil {
			return err
		}
		s1, err := c.Issend([]byte{byte(me)}, (me+1)%n, 0)
		if err != nil {
			return err
		}
		s2, err := c.Isend([]byte{byte(100 + me)}, me, 1)
		if err != nil {
			return err
		}
		if err := Waitall(rr, rs, s1, s2); err != nil {
			return err
		}
		if in[0] != byte((me+n-1)%n) || self[0] != byte(100+me) {
			return fmt.Errorf("ring got %d, self got %d", in[0], self[0])
		}
		return nil
	})
}

func TestPointToPointArgumentErrors(t *testing.T) {
	runRanks(t, 3, 0, func(c Comm) error {
		calls := map[string]func() (Request, error){
			"isend to 3":    func() (Request, error) { return c.Isend(nil, 3, 0) },
			"issend to -1":  func() (Request, error) { return c.Issend(nil, -1, 0) },
			"isend tag -2":  func() (Request, error) { return c.Isend(nil, 0, -2) },
			"irecv from 5":  func() (Request, error) { return c.Irecv(nil, 5, 0) },
			"irecv from -2": func() (Request, error) { return c.Irecv(nil, -2, 0) },
			"irecv tag -1":  func() (Request, error) { return c.Irecv(nil, AnySource, -1) },
		}
		for name, call := range calls {
			r, err := call()
			if r != nil || !errors.Is(err, ioerr.ErrArg) {
				return fmt.Errorf("%s: got request %v, error %v; want an ErrArg error", name, r, err)
			}
		}
		return nil
	})
}

// TestPointToPointMatchesSendOrder is a property test: random messages
// between random ranks, receives posted per (source, tag) in a random
// interleaving, each receive gets the matching send in order.
func TestPointToPointMatchesSendOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "n")
		type msg struct{ src, dst, tag, size int }
		msgs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) msg {
			return msg{
				src:  rapid.IntRange(0, n-1).Draw(t, "src"),
				dst:  rapid.IntRange(0, n-1).Draw(t, "dst"),
				tag:  rapid.IntRange(0, 2).Draw(t, "tag"),
				size: rapid.IntRange(0, 4).Draw(t, "size"),
			}
		}), 0, 30).Draw(rt, "msgs")
		seed := rapid.Int64().Draw(rt, "seed")
		sync := rapid.Bool().Draw(rt, "issend")
		payload := func(k int, m msg) []byte {
			b := make([]byte, m.size)
			for i := range b {
				b[i] = byte(k*5 + i)
			}
			return b
		}
		err := RunWorldTimeout(n, 0, testTimeout, func(c Comm) error {
			me := c.Rank()
			// Receives in an order shuffled by seed but per (src, tag)
			// in send order.
			var mine []int
			for k, m := range msgs {
				if m.dst == me {
					mine = append(mine, k)
				}
			}
			order := shuffleKeepingStreams(mine, func(k int) [2]int { return [2]int{msgs[k].src, msgs[k].tag} }, seed+int64(me))
			var reqs []Request
			bufs := map[int][]byte{}
			postRecvs := func() error {
				for _, k := range order {
					b := make([]byte, 4)
					r, err := c.Irecv(b, msgs[k].src, msgs[k].tag)
					if err != nil {
						return err
					}
					reqs, bufs[k] = append(reqs, r), b
				}
				return nil
			}
			// Some ranks post receives before sending (matched on send),
			// others after (matched from the queue).
			recvFirst := (seed>>me)&1 == 0
			if recvFirst {
				if err := postRecvs(); err != nil {
					return err
				}
			}
			for k, m := range msgs {
				if m.src != me {
					continue
				}
				send := c.Isend
				if sync {
					send = c.Issend
				}
				r, err := send(payload(k, m), m.dst, m.tag)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			if !recvFirst {
				if err := postRecvs(); err != nil {
					return err
				}
			}
			if err := Waitall(reqs...); err != nil {
				return err
			}
			for k, b := range bufs {
				if err := sameBytes(fmt.Sprintf("message %d", k), b[:msgs[k].size], payload(k, msgs[k])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
	})
}

// shuffleKeepingStreams returns items in a pseudo-random interleaving that
// keeps the relative order of items with the same stream key.
func shuffleKeepingStreams(items []int, stream func(int) [2]int, seed int64) []int {
	queues := map[[2]int][]int{}
	var keys [][2]int
	for _, it := range items {
		k := stream(it)
		if _, ok := queues[k]; !ok {
			keys = append(keys, k)
		}
		queues[k] = append(queues[k], it)
	}
	out := make([]int, 0, len(items))
	x := uint64(seed)*2654435761 + 1
	for len(out) < len(items) {
		x = x*6364136223846793005 + 1442695040888963407
		k := keys[(x>>33)%uint64(len(keys))]
		if q := queues[k]; len(q) > 0 {
			out = append(out, q[0])
			queues[k] = q[1:]
		}
	}
	return out
}
