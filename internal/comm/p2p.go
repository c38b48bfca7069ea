package comm

import "slices"

// Point-to-point messages of the in-memory communicator. A send looks for
// a posted receive in the destination's mailbox, a receive for a queued
// send in its own; whichever comes second does the copy. Both queues are
// searched in order, which gives MPI's non-overtaking rule per (source, tag).

func (c *memComm) Isend(buf []byte, dest, tag int) (Request, error) {
	return c.send("isend", buf, dest, tag, false)
}

func (c *memComm) Issend(buf []byte, dest, tag int) (Request, error) {
	return c.send("issend", buf, dest, tag, true)
}

// send delivers at once if the receive is posted. Otherwise Isend queues a
// copy and completes (eager), while Issend queues the caller's buffer and
// completes when a receive takes it.
func (c *memComm) send(op string, buf []byte, dest, tag int, sync bool) (Request, error) {
	if err := c.usable(op); err != nil {
		return nil, err
	}
	if dest < 0 || dest >= c.Size() {
		return nil, argError(op, c.rank, "destination rank %d out of range [0,%d)", dest, c.Size())
	}
	if tag < 0 {
		return nil, argError(op, c.rank, "negative tag %d", tag)
	}
	w := c.g.world
	box := &c.g.boxes[dest]
	box.mu.Lock()
	if recv := box.takePosted(c.rank, tag); recv != nil {
		box.mu.Unlock()
		recv.deliver(buf, c.rank)
		return completedSend(w, len(buf)), nil
	}
	env := &envelope{src: c.rank, tag: tag}
	var req *request
	if sync {
		req = &request{
			w: w, owner: c.worldRank(), done: make(chan struct{}),
			ci:  callInfo{name: "Wait(Issend)", comm: c.g.id, peer: dest, tag: tag, p2p: true},
			box: box, env: env,
		}
		env.data, env.sender = buf, req
	} else {
		env.data = slices.Clone(buf)
		req = completedSend(w, len(buf))
	}
	box.unexpected = append(box.unexpected, env)
	box.mu.Unlock()
	return req, nil
}

func (c *memComm) Irecv(buf []byte, src, tag int) (Request, error) {
	if err := c.usable("irecv"); err != nil {
		return nil, err
	}
	if src != AnySource && (src < 0 || src >= c.Size()) {
		return nil, argError("irecv", c.rank, "source rank %d out of range [0,%d)", src, c.Size())
	}
	if tag < 0 {
		return nil, argError("irecv", c.rank, "negative tag %d", tag)
	}
	req := &request{
		w: c.g.world, owner: c.worldRank(), done: make(chan struct{}),
		ci:  callInfo{name: "Wait(Irecv)", comm: c.g.id, peer: src, tag: tag, p2p: true},
		buf: buf, src: src, tag: tag,
	}
	box := &c.g.boxes[c.rank]
	box.mu.Lock()
	if env := box.takeUnexpected(src, tag); env != nil {
		box.mu.Unlock()
		req.deliver(env.data, env.src)
		if env.sender != nil {
			env.sender.complete(len(env.data), nil)
		}
		return req, nil
	}
	req.box = box
	box.posted = append(box.posted, req)
	box.mu.Unlock()
	return req, nil
}

// takePosted removes and returns the first posted receive that matches a
// message from src with tag. The caller holds box.mu.
func (box *mailbox) takePosted(src, tag int) *request {
	for i, r := range box.posted {
		if r.tag == tag && (r.src == AnySource || r.src == src) {
			box.posted = slices.Delete(box.posted, i, i+1)
			return r
		}
	}
	return nil
}

// takeUnexpected removes and returns the first queued send that a receive
// from src (or AnySource) with tag matches. The caller holds box.mu.
func (box *mailbox) takeUnexpected(src, tag int) *envelope {
	for i, e := range box.unexpected {
		if e.tag == tag && (src == AnySource || e.src == src) {
			box.unexpected = slices.Delete(box.unexpected, i, i+1)
			return e
		}
	}
	return nil
}
