package benchutil

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Progress prints how far a long run has come, on rank 0: the phase, the
// percentage of the work done and the time elapsed. Nothing is printed
// during the first Delay of a run, so short runs stay quiet; after that a
// line at most every Every (on a terminal one line rewritten in place).
// The zero of Progress and a nil *Progress print nothing.
type Progress struct {
	w      io.Writer
	tty    bool
	prog   string
	start  time.Time
	last   time.Time
	shown  bool
	Delay  time.Duration
	Every  time.Duration
	now    func() time.Time
	phase  string
	active bool
}

// NewProgress returns a progress printer to stderr for program prog, or a
// silent one when on is false (other ranks, -q).
func NewProgress(prog string, on bool) *Progress {
	if !on {
		return nil
	}
	p := &Progress{w: os.Stderr, prog: prog, Delay: 2 * time.Second, Every: 2 * time.Second, now: time.Now}
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		p.tty, p.Every = true, 250*time.Millisecond
	}
	p.start = p.now()
	return p
}

// Update reports done out of total units of work in phase (a short text
// such as "collio write rep 1/3").
func (p *Progress) Update(phase string, done, total int64) {
	if p == nil {
		return
	}
	now := p.now()
	if now.Sub(p.start) < p.Delay || (p.shown && now.Sub(p.last) < p.Every && phase == p.phase) {
		return
	}
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	line := fmt.Sprintf("%s: %s %5.1f%% %6.1fs", p.prog, phase, pct, now.Sub(p.start).Seconds())
	if p.tty {
		fmt.Fprintf(p.w, "\r%-72s", line)
		p.active = true
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.shown, p.last, p.phase = true, now, phase
}

// Done ends the progress display (a newline after an in-place line).
func (p *Progress) Done() {
	if p == nil || !p.active {
		return
	}
	fmt.Fprintln(p.w)
	p.active = false
}
