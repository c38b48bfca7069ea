package metrics

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Per-file reports (COLLIO_STATS in the C library, in the manner of
// Darshan): each rank keeps a FileCounters per open file and adds every
// call as it returns; at close the ranks' counters are gathered (one
// fixed-size Allgather, Encode/DecodeFileCounters) and Aggregate turns them
// into a FileReport, printed by Text or marshalled as JSON. The strategy
// log (Strategies) is rank 0's: every rank chooses the same strategy for
// the same reason. Nothing here communicates.

// Kinds of calls a file report separates.
const (
	CollectiveWrite = iota
	CollectiveRead
	IndependentWrite
	IndependentRead
	NumKinds
)

// Counters are one rank's totals over one kind of call on one file.
// Failed calls count in Failed only. Independent calls fill Calls, Bytes,
// Pieces and Total.
type Counters struct {
	Calls  int64 // calls that succeeded
	Failed int64 // calls that returned an error
	Bytes  int64 // data bytes moved
	Pieces int64 // contiguous file pieces the calls touched (layout.PiecesOf)
	// Rounds are two-phase cycles; AggregatorCalls the collective calls
	// in which this rank did file I/O for others.
	Rounds          int64
	AggregatorCalls int64
	Plan            time.Duration
	ReqExchange     time.Duration
	Shuffle         time.Duration
	IO              time.Duration
	RMW             time.Duration
	IOWait          time.Duration // file I/O not hidden behind exchange
	CacheDrain      time.Duration
	Agree           time.Duration
	Publish         time.Duration // syncs for read-back (Call.Publish)
	Total           time.Duration
	MsgsSent        int64
	MsgsRecv        int64
	BytesSent       int64
	BytesRecv       int64
}

// fields lists the counters in a fixed order, matching Kind.stats.
func (c *Counters) fields() []*int64 {
	d := func(p *time.Duration) *int64 { return (*int64)(p) }
	return []*int64{&c.Calls, &c.Failed, &c.Bytes, &c.Pieces, &c.Rounds, &c.AggregatorCalls,
		d(&c.Plan), d(&c.ReqExchange), d(&c.Shuffle), d(&c.IO), d(&c.RMW), d(&c.IOWait), d(&c.CacheDrain), d(&c.Agree), d(&c.Publish), d(&c.Total),
		&c.MsgsSent, &c.MsgsRecv, &c.BytesSent, &c.BytesRecv}
}

// FileCounters is what one rank knows about one open file.
type FileCounters struct {
	Kinds [NumKinds]Counters
	Open  time.Duration // open to close
}

// AddCollective adds a collective call that succeeded, as adio recorded
// it, with the file pieces it touched on this rank.
func (fc *FileCounters) AddCollective(c Call, pieces int64) {
	fc.AddCollectiveCalls(c, 1, pieces)
}

// AddCollectiveCalls adds calls collective calls that succeeded, with c
// their sum (its operation theirs) and pieces the file pieces they
// touched.
func (fc *FileCounters) AddCollectiveCalls(c Call, calls, pieces int64) {
	k := &fc.Kinds[collectiveKind(c.Op)]
	k.Calls += calls
	k.Bytes += c.Bytes
	k.Pieces += pieces
	k.Rounds += int64(c.Rounds)
	if c.Aggregator {
		k.AggregatorCalls += calls
	}
	k.Plan += c.Plan
	k.ReqExchange += c.ReqExchange
	k.Shuffle += c.Shuffle
	k.IO += c.IO
	k.RMW += c.RMW
	k.IOWait += c.IOWait
	k.CacheDrain += c.CacheDrain
	k.Agree += c.Agree
	k.Publish += c.Publish
	k.Total += c.Total
	k.MsgsSent += c.MsgsSent
	k.MsgsRecv += c.MsgsRecv
	k.BytesSent += c.BytesSent
	k.BytesRecv += c.BytesRecv
}

// AddFailedCollective counts a collective call that returned an error.
func (fc *FileCounters) AddFailedCollective(write bool) {
	if write {
		fc.Kinds[CollectiveWrite].Failed++
	} else {
		fc.Kinds[CollectiveRead].Failed++
	}
}

// AddIndependent adds an independent call (failed: it returned an error).
func (fc *FileCounters) AddIndependent(write bool, bytes, pieces int64, d time.Duration, failed bool) {
	if failed {
		fc.Kinds[independentKind(write)].Failed++
		return
	}
	fc.AddIndependentCalls(write, 1, bytes, pieces, d)
}

// AddIndependentCalls adds calls independent calls that succeeded, with
// their bytes, pieces and time summed.
func (fc *FileCounters) AddIndependentCalls(write bool, calls, bytes, pieces int64, d time.Duration) {
	k := &fc.Kinds[independentKind(write)]
	k.Calls += calls
	k.Bytes += bytes
	k.Pieces += pieces
	k.Total += d
}

func independentKind(write bool) int {
	if write {
		return IndependentWrite
	}
	return IndependentRead
}

// collectiveKind classes a collective call by its operation's name, the
// nonblocking forms (iread_at_all, ...) and split ones (read_all_begin)
// with their blocking form.
func collectiveKind(op string) int {
	if strings.HasPrefix(strings.TrimPrefix(op, "i"), "read") {
		return CollectiveRead
	}
	return CollectiveWrite
}

// Encode returns fc as a fixed-size record (FileCountersSize bytes).
func (fc *FileCounters) Encode() []byte {
	b := make([]byte, 0, FileCountersSize)
	for i := range fc.Kinds {
		for _, p := range fc.Kinds[i].fields() {
			b = binary.LittleEndian.AppendUint64(b, uint64(*p))
		}
	}
	return binary.LittleEndian.AppendUint64(b, uint64(fc.Open))
}

// FileCountersSize is the size of an encoded FileCounters.
var FileCountersSize = 8 * (NumKinds*len((&Counters{}).fields()) + 1)

// DecodeFileCounters reads a record made by Encode.
func DecodeFileCounters(b []byte) (FileCounters, error) {
	var fc FileCounters
	if len(b) != FileCountersSize {
		return fc, fmt.Errorf("file counters: %d bytes, want %d", len(b), FileCountersSize)
	}
	for i := range fc.Kinds {
		for _, p := range fc.Kinds[i].fields() {
			*p = int64(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
	}
	fc.Open = time.Duration(binary.LittleEndian.Uint64(b))
	return fc, nil
}

// StrategyGroup is the collective calls that took one strategy for one
// reason.
type StrategyGroup struct {
	Op       string  `json:"op"`
	Strategy string  `json:"strategy"`
	Reason   string  `json:"reason"`
	Calls    int64   `json:"calls"`
	First    []int64 `json:"first_calls"` // call numbers, 1 = the file's first collective call
	// Domains is how the group's first call split the file among the
	// aggregators (two-phase), when it says.
	Domains string `json:"domains,omitempty"`
}

// Limits of the strategy log: groups kept apart (later reasons fold into
// one "other reasons" group per operation and strategy), and call numbers
// kept per group.
const (
	MaxStrategyGroups = 32
	FirstCalls        = 5
	OtherReasons      = "(other reasons)"
)

// Strategies groups a file's collective calls by operation, strategy and
// reason, in order of first appearance.
type Strategies struct {
	Groups []StrategyGroup
	index  map[[3]string]int
}

// Add records collective call number seq (from 1) as adio described it.
func (s *Strategies) Add(seq int64, c Call) { s.AddCalls(seq, 1, c) }

// AddCalls records calls collective calls numbered from seq on that went
// as c describes.
func (s *Strategies) AddCalls(seq, calls int64, c Call) {
	if calls <= 0 {
		return
	}
	op, strategy, reason := c.Op, c.Strategy, c.Reason
	if s.index == nil {
		s.index = make(map[[3]string]int)
	}
	key := [3]string{op, strategy, reason}
	i, ok := s.index[key]
	if !ok && len(s.index) >= MaxStrategyGroups {
		key[2] = OtherReasons
		i, ok = s.index[key]
	}
	if !ok {
		i = len(s.Groups)
		s.Groups = append(s.Groups, StrategyGroup{Op: op, Strategy: strategy, Reason: key[2], Domains: c.Domains})
		s.index[key] = i
	}
	g := &s.Groups[i]
	g.Calls += calls
	for k := int64(0); k < calls && len(g.First) < FirstCalls; k++ {
		g.First = append(g.First, seq+k)
	}
}

// Stat is one counter over the ranks.
type Stat struct {
	Sum int64 `json:"sum"`
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

func (s *Stat) add(v int64, first bool) {
	if first {
		*s = Stat{v, v, v}
		return
	}
	s.Sum += v
	s.Min = min(s.Min, v)
	s.Max = max(s.Max, v)
}

// Kind is one kind of call over the ranks: each counter's sum, minimum
// and maximum per rank (times in nanoseconds).
type Kind struct {
	Calls           Stat `json:"calls"`
	Failed          Stat `json:"failed"`
	Bytes           Stat `json:"bytes"`
	Pieces          Stat `json:"pieces"`
	Rounds          Stat `json:"rounds"`
	AggregatorCalls Stat `json:"aggregator_calls"`
	Plan            Stat `json:"plan_ns"`
	ReqExchange     Stat `json:"req_exchange_ns"`
	Shuffle         Stat `json:"shuffle_ns"`
	IO              Stat `json:"io_ns"`
	RMW             Stat `json:"rmw_ns"`
	IOWait          Stat `json:"io_wait_ns"`
	CacheDrain      Stat `json:"cache_drain_ns"`
	Agree           Stat `json:"agree_ns"`
	Publish         Stat `json:"publish_ns"`
	Total           Stat `json:"total_ns"`
	MsgsSent        Stat `json:"msgs_sent"`
	MsgsRecv        Stat `json:"msgs_recv"`
	BytesSent       Stat `json:"bytes_sent"`
	BytesRecv       Stat `json:"bytes_recv"`
	// AggregatorRanks is how many ranks did file I/O for others in at
	// least one call.
	AggregatorRanks int `json:"aggregator_ranks"`
}

func (k *Kind) stats() []*Stat {
	return []*Stat{&k.Calls, &k.Failed, &k.Bytes, &k.Pieces, &k.Rounds, &k.AggregatorCalls,
		&k.Plan, &k.ReqExchange, &k.Shuffle, &k.IO, &k.RMW, &k.IOWait, &k.CacheDrain, &k.Agree, &k.Publish, &k.Total,
		&k.MsgsSent, &k.MsgsRecv, &k.BytesSent, &k.BytesRecv}
}

// Sum, Min and Max give the kind's counters over the ranks (their sum,
// smallest and largest per-rank value) as Counters, for the C API.
func (k *Kind) Sum() Counters { return k.pick(func(s Stat) int64 { return s.Sum }) }
func (k *Kind) Min() Counters { return k.pick(func(s Stat) int64 { return s.Min }) }
func (k *Kind) Max() Counters { return k.pick(func(s Stat) int64 { return s.Max }) }

func (k *Kind) pick(v func(Stat) int64) Counters {
	var c Counters
	dst := c.fields()
	for i, s := range k.stats() {
		*dst[i] = v(*s)
	}
	return c
}

// ReportFormat names the layout of FileReport's JSON.
const ReportFormat = "collio-stats/1"

// FileReport is one file's report: the ranks' counters aggregated, and
// rank 0's strategy log.
type FileReport struct {
	Format  string `json:"format"`
	Path    string `json:"path"`     // as the program gave it
	AbsPath string `json:"abs_path"` // absolute, without a driver prefix
	Ranks   int    `json:"ranks"`
	Closed  string `json:"closed,omitempty"` // when, RFC 3339 (set by the caller)
	// Open is the time from open to close, over ranks.
	Open             Stat            `json:"open_to_close_ns"`
	CollectiveWrite  Kind            `json:"collective_write"`
	CollectiveRead   Kind            `json:"collective_read"`
	IndependentWrite Kind            `json:"independent_write"`
	IndependentRead  Kind            `json:"independent_read"`
	Strategies       []StrategyGroup `json:"strategies"`
}

// Kinds returns the report's kinds in the order of the constants.
func (r *FileReport) Kinds() [NumKinds]*Kind {
	return [NumKinds]*Kind{&r.CollectiveWrite, &r.CollectiveRead, &r.IndependentWrite, &r.IndependentRead}
}

// Aggregate combines every rank's counters (index = rank) with rank 0's
// strategy log.
func Aggregate(path, absPath string, ranks []FileCounters, strategies []StrategyGroup) FileReport {
	r := FileReport{Format: ReportFormat, Path: path, AbsPath: absPath, Ranks: len(ranks), Strategies: strategies}
	if r.Strategies == nil {
		r.Strategies = []StrategyGroup{}
	}
	kinds := r.Kinds()
	for i := range ranks {
		fc := &ranks[i]
		r.Open.add(int64(fc.Open), i == 0)
		for k, kr := range kinds {
			c := &fc.Kinds[k]
			for j, p := range c.fields() {
				kr.stats()[j].add(*p, i == 0)
			}
			if c.AggregatorCalls > 0 {
				kr.AggregatorRanks++
			}
		}
	}
	return r
}

// Names of the kinds in the text report.
var kindLabels = [NumKinds]string{"collective writes", "collective reads", "independent writes", "independent reads"}

// Text writes the report for people: counts and sizes, the strategies,
// and where the time went, in aligned columns.
func (r *FileReport) Text(w io.Writer) error {
	var b strings.Builder
	path := r.Path
	if r.AbsPath != "" && r.AbsPath != r.Path && !strings.HasSuffix(r.Path, r.AbsPath) {
		path += " (" + r.AbsPath + ")"
	}
	fmt.Fprintf(&b, "collio stats: %s\n", path)
	fmt.Fprintf(&b, "  %d %s, open to close %s ms (slowest rank)\n", r.Ranks, plural(r.Ranks, "rank", "ranks"), ms(r.Open.Max))
	kinds := r.Kinds()

	// Calls, pieces and bytes.
	rows := [][]string{{"", "calls", "pieces", "MiB", "calls/rank", "pieces/rank", "MiB/rank"}}
	for k, kr := range kinds {
		if kr.Calls.Max == 0 && kr.Failed.Max == 0 {
			continue
		}
		calls := kr.Calls.Sum
		if k == CollectiveWrite || k == CollectiveRead {
			calls = kr.Calls.Max // the same on every rank
		}
		rows = append(rows, []string{kindLabels[k], count(calls), count(kr.Pieces.Sum), mib(kr.Bytes.Sum),
			span(kr.Calls, count), span(kr.Pieces, count), span(kr.Bytes, mib)})
	}
	if len(rows) == 1 {
		b.WriteString("  no data transfers\n")
	} else {
		table(&b, "  ", rows)
		b.WriteString("  (collective calls: per rank; pieces and MiB: the sum over ranks; per rank: min..max)\n")
	}
	var failed []string
	for k, kr := range kinds {
		if kr.Failed.Sum > 0 {
			failed = append(failed, fmt.Sprintf("%s %s", kindLabels[k], count(kr.Failed.Sum)))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "  failed calls (sum over ranks, not counted above): %s\n", strings.Join(failed, ", "))
	}

	// Strategies.
	if len(r.Strategies) > 0 {
		b.WriteString("\n  strategies of the collective calls (rank 0's; every rank chooses the same):\n")
		rows := [][]string{{"calls", "op", "strategy", "call #", "reason"}}
		for _, g := range r.Strategies {
			nums := make([]string, len(g.First))
			for i, n := range g.First {
				nums[i] = strconv.FormatInt(n, 10)
			}
			first := strings.Join(nums, ",")
			if g.Calls > int64(len(g.First)) {
				first += ",..."
			}
			reason := g.Reason
			if g.Domains != "" {
				reason += "; domains: " + g.Domains
			}
			rows = append(rows, []string{count(g.Calls), g.Op, g.Strategy, first, reason})
		}
		table(&b, "    ", rows, 1, 2, 3, 4)
	}

	// Time.
	cw, cr := &r.CollectiveWrite, &r.CollectiveRead
	iw, ir := &r.IndependentWrite, &r.IndependentRead
	writes := cw.Calls.Max > 0 || iw.Calls.Max > 0
	reads := cr.Calls.Max > 0 || ir.Calls.Max > 0
	if writes || reads {
		b.WriteString("\n")
		head := []string{"time, ms"}
		if writes {
			head = append(head, "writes: max/rank", "sum")
		}
		if reads {
			head = append(head, "reads: max/rank", "sum")
		}
		rows := [][]string{head}
		row := func(label string, w, r Stat) {
			line := []string{label}
			if writes {
				line = append(line, ms(w.Max), ms(w.Sum))
			}
			if reads {
				line = append(line, ms(r.Max), ms(r.Sum))
			}
			rows = append(rows, line)
		}
		if cw.Calls.Max > 0 || cr.Calls.Max > 0 {
			row("collective: entry and plan", cw.Plan, cr.Plan)
			row("  request exchange", cw.ReqExchange, cr.ReqExchange)
			row("  data exchange", cw.Shuffle, cr.Shuffle)
			row("  file I/O", cw.IO, cr.IO)
			row("  read-modify-write reads", cw.RMW, cr.RMW)
			row("  I/O not hidden", cw.IOWait, cr.IOWait)
			if cw.CacheDrain.Max > 0 || cr.CacheDrain.Max > 0 {
				row("  cache drain", cw.CacheDrain, cr.CacheDrain)
			}
			if cw.Publish.Max > 0 || cr.Publish.Max > 0 {
				row("  sync for read-back", cw.Publish, cr.Publish)
			}
			row("  agreement", cw.Agree, cr.Agree)
			row("  whole calls", cw.Total, cr.Total)
		}
		if iw.Calls.Max > 0 || ir.Calls.Max > 0 {
			row("independent: whole calls", iw.Total, ir.Total)
		}
		table(&b, "  ", rows, 0)
		for _, x := range []struct {
			what string
			k    *Kind
		}{{"writes", cw}, {"reads", cr}} {
			k := x.k
			if k.Calls.Max == 0 || (k.MsgsSent.Sum == 0 && k.AggregatorRanks == 0) {
				continue
			}
			fmt.Fprintf(&b, "  collective %s: %s messages sent (max/rank %s), %s MiB (max/rank %s); %d aggregator %s; rounds max/rank %s\n",
				x.what, count(k.MsgsSent.Sum), count(k.MsgsSent.Max), mib(k.BytesSent.Sum), mib(k.BytesSent.Max),
				k.AggregatorRanks, plural(k.AggregatorRanks, "rank", "ranks"), count(k.Rounds.Max))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) }

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 2, 64) }

// count formats n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// span formats a per-rank range: one value when every rank had the same.
func span(s Stat, f func(int64) string) string {
	if s.Min == s.Max {
		return f(s.Min)
	}
	return f(s.Min) + ".." + f(s.Max)
}

// table writes rows with columns padded to their widest cell: the
// columns listed in left (default: the first) aligned left, the others
// right. The last column is not padded when it is left-aligned.
func table(b *strings.Builder, indent string, rows [][]string, left ...int) {
	if len(left) == 0 {
		left = []int{0}
	}
	isLeft := map[int]bool{}
	for _, c := range left {
		isLeft[c] = true
	}
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			switch {
			case !isLeft[i]:
				line.WriteString(pad + c)
			case i == len(r)-1:
				line.WriteString(c)
			default:
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}
