package factory

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/coordbench/coordbench/internal/decfmt"
)

// EventType names a realized event in the trace.
type EventType uint8

// The events of the design notes, in the order they are listed there, plus
// the episode_start header.
const (
	EvArrival EventType = iota
	EvRelease
	EvStageReleaseReady
	EvRouteAssigned
	EvAdmission
	EvTransportStart
	EvTransportComplete
	EvBlocked
	EvBlockingRelease
	EvSetupStart
	EvSetupComplete
	EvProcessStart
	EvProcessResume
	EvFinish
	EvBreakdown
	EvRepair
	EvPowerChange
	EvJobComplete
	EvQueueRelease
	EvEpisodeEnd
	EvEpisodeStart
	NumEventTypes
)

var eventNames = [NumEventTypes]string{
	"arrival", "release", "stage_release_ready", "route_assigned", "admission",
	"transport_start", "transport_complete", "blocked", "blocking_release",
	"setup_start", "setup_complete", "process_start", "process_resume", "finish",
	"breakdown", "repair", "power_change", "job_complete", "queue_release", "episode_end", "episode_start",
}

// eventFields are the trace's `,"ev":"<name>"` fields, one append each.
var eventFields = func() (f [NumEventTypes]string) {
	for i, n := range eventNames {
		f[i] = `,"ev":"` + n + `"`
	}
	return f
}()

func (e EventType) String() string {
	if e < NumEventTypes {
		return eventNames[e]
	}
	return "unknown"
}

// ParseEventType maps a trace name back to its EventType.
func ParseEventType(s string) (EventType, bool) {
	for i, n := range eventNames {
		if n == s {
			return EventType(i), true
		}
	}
	return 0, false
}

// Record is one realized event. Integer fields are -1 when they do not
// apply; see docs/trace-format.md for which fields each event carries.
type Record struct {
	T       float64
	Ev      EventType
	Job     int32
	Op      int32
	Cell    int32 // destination or location cell
	Machine int32 // index within the cell
	From    int32 // transport origin cell; -1 = the dock
	KW      float64
	Due     float64
	Dur     float64
	Phase   MachineState // process_resume: setup or busy
	Status  Status
	Ops     int32 // arrival: route length
	Product int32 // arrival: product index
	Seed    uint64
}

// Tracer consumes records one at a time, in the order the engine made
// them (Engine.Records): a harness.Episode's Observer is one. The record is
// the engine's and is reused: copy what you keep.
type Tracer interface {
	Emit(r *Record)
}

// AppendJSON appends r as one JSON object (no newline). Names are resolved
// through the plant; the field order is fixed so traces are byte-stable.
func (r *Record) AppendJSON(b []byte, p *Plant) []byte {
	b = append(b, `{"t":`...)
	b = AppendFloat(b, r.T)
	return r.appendFields(b, p)
}

// TraceEncoder writes records as AppendJSON does, remembering the last
// time it formatted: the records of one instant (often several in a row)
// share its bytes. The zero value is ready to use; it is owned by one
// writer (an episode's trace), never shared.
//
// The fixed parts of a record (the time with its `{"t":`, the event name
// with the `,"job":` that follows it, the cell field) are kept as 8-byte
// words and stored a word at a time into the buffer's spare capacity:
// one store per 8 bytes instead of a call to memmove per part. Append
// therefore may write into b's spare capacity beyond the bytes it
// appends (as append itself writes there); it never writes below len(b).
type TraceEncoder struct {
	t    uint64 // bits of the last formatted time
	ok   bool
	tLen int
	tW   [tWords]uint64 // `{"t":` and its JSON text (at most 5+24 bytes)
}

// tWords is the words of a cached time: `{"t":` and up to 27 bytes.
const tWords = 4

// Append appends r as one JSON object (no newline), byte for byte what
// r.AppendJSON(b, p) appends.
func (enc *TraceEncoder) Append(b []byte, r *Record, p *Plant) []byte {
	return enc.appendFast(b, r, p, false)
}

// AppendLine appends r as Append does, followed by a newline. (Small
// enough to inline into the trace writer: one call per record.)
func (enc *TraceEncoder) AppendLine(b []byte, r *Record, p *Plant) []byte {
	return enc.appendFast(b, r, p, true)
}

// appendSlow is Append (AppendLine, if line) for the header, an unknown
// event type, or a plant not built by Compile.
func (enc *TraceEncoder) appendSlow(b []byte, r *Record, p *Plant, line bool) []byte {
	b = r.appendFields(enc.appendTime(b, r.T), p)
	if line {
		b = append(b, '\n')
	}
	return b
}

// appendTime appends `{"t":` and time t, and keeps them as the encoder's
// last time. Times with long binary tails (sums of noisy durations, nearly
// all of them) go to shortestDigits without its short-decimal try and
// are written eight digits at a time; the others as AppendFloat writes
// them.
func (enc *TraceEncoder) appendTime(b []byte, t float64) []byte {
	b = spare(b)
	if enc.ok && math.Float64bits(t) == enc.t {
		return putWords4(b, &enc.tW, enc.tLen)
	}
	return enc.formatTime(b, t)
}

// formatTime is appendTime for a time other than the last one.
func (enc *TraceEncoder) formatTime(b []byte, t float64) []byte {
	var buf [decimalBuf]byte
	n := copy(buf[:], `{"t":`)
	if c, k, ok := shortestDigits(t, false); ok {
		n = putDecimal(&buf, n, t < 0, c, k)
	} else {
		tb := AppendFloat(buf[:n], t)
		if len(tb) > 8*tWords { // a long text (not a simulation time): written, not kept
			enc.ok = false
			return spare(append(b, tb...))
		}
		n = len(tb) // in buf
	}
	if n > 8*tWords {
		enc.ok = false
		return spare(append(b, buf[:n]...))
	}
	enc.t, enc.ok, enc.tLen = math.Float64bits(t), true, n
	for i := range enc.tW {
		enc.tW[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
	return putWords4(b, &enc.tW, enc.tLen)
}

// spareMin is the spare capacity the word stores of a record need: the
// time (32 bytes), the event head (40), the cell (32), three integers
// (3 x 4) and the constant text between them, with room to spare.
// Append makes room for it (slices.Grow: rarely a reallocation, the
// trace writer's buffer is flushed long before it fills) before a record
// and again after the parts written with append (strings and floats of
// any length); the put functions below rely on it.
const spareMin = 256

// spare makes room for spareMin more bytes in b.
func spare(b []byte) []byte {
	if cap(b)-len(b) < spareMin {
		b = slices.Grow(b, spareMin)
	}
	return b
}

// putWords4 appends the first n (<= 32) bytes of w's little-endian words.
func putWords4(b []byte, w *[4]uint64, n int) []byte {
	l := len(b)
	s := b[l : l+32 : l+32]
	binary.LittleEndian.PutUint64(s[0:8], w[0])
	binary.LittleEndian.PutUint64(s[8:16], w[1])
	binary.LittleEndian.PutUint64(s[16:24], w[2])
	binary.LittleEndian.PutUint64(s[24:32], w[3])
	return b[:l+n]
}

// putWords5 appends the first n (<= 40) bytes of w's little-endian words.
func putWords5(b []byte, w *[5]uint64, n int) []byte {
	l := len(b)
	s := b[l : l+40 : l+40]
	binary.LittleEndian.PutUint64(s[0:8], w[0])
	binary.LittleEndian.PutUint64(s[8:16], w[1])
	binary.LittleEndian.PutUint64(s[16:24], w[2])
	binary.LittleEndian.PutUint64(s[24:32], w[3])
	binary.LittleEndian.PutUint64(s[32:40], w[4])
	return b[:l+n]
}

// textWords is a short text as little-endian words (ok false: longer
// than 32 bytes, not kept).
type textWords struct {
	w  [4]uint64
	n  int
	ok bool
}

func makeTextWords(s string) textWords {
	var buf [32]byte
	if len(s) > len(buf) {
		return textWords{}
	}
	t := textWords{n: copy(buf[:], s), ok: true}
	for i := range t.w {
		t.w[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
	return t
}

// eventHead is an event's `,"ev":"<name>"` field and the same followed by
// `,"job":`, as words (at most 7+19+1+7 bytes).
type eventHead struct {
	w, wJob [5]uint64
	n, nJob int
}

var eventHeads = func() (h [NumEventTypes]eventHead) {
	for i, f := range eventFields {
		var buf [40]byte
		h[i].n = copy(buf[:], f)
		for k := range h[i].w {
			h[i].w[k] = binary.LittleEndian.Uint64(buf[8*k:])
		}
		h[i].nJob = copy(buf[:], f+`,"job":`)
		for k := range h[i].wJob {
			h[i].wJob[k] = binary.LittleEndian.Uint64(buf[8*k:])
		}
	}
	return h
}()

// smallInts holds the decimal text of 0 ... 999 in its low bytes and the
// text's length in its top byte.
var smallInts = func() (t [1000]uint32) {
	for v := range t {
		s := strconv.Itoa(v)
		var x uint32
		for i := len(s) - 1; i >= 0; i-- {
			x = x<<8 | uint32(s[i])
		}
		t[v] = x | uint32(len(s))<<24
	}
	return t
}()

// putSmallInt appends v (0 <= v < len(smallInts)) in decimal.
func putSmallInt(b []byte, v int32) []byte {
	x := smallInts[v]
	l := len(b)
	binary.LittleEndian.PutUint32(b[l:l+4:l+4], x)
	return b[:l+int(x>>24)]
}

// appendFast appends what Append appends (and a newline, if line): the
// events of an episode (not its header, not an unknown type) on a
// compiled plant with the fixed parts stored as words (see TraceEncoder),
// the others through appendSlow.
func (enc *TraceEncoder) appendFast(b []byte, r *Record, p *Plant, line bool) []byte {
	if r.Ev >= EvEpisodeStart || len(p.cellWords) != len(p.Cells) {
		return enc.appendSlow(b, r, p, line)
	}
	b = spare(b)
	if enc.ok && math.Float64bits(r.T) == enc.t {
		b = putWords4(b, &enc.tW, enc.tLen)
	} else {
		b = enc.formatTime(b, r.T)
	}
	h := &eventHeads[r.Ev]
	if r.Job >= 0 {
		b = putWords5(b, &h.wJob, h.nJob)
		if uint32(r.Job) < uint32(len(smallInts)) {
			b = putSmallInt(b, r.Job)
		} else {
			b = appendIntMore(b, r.Job)
		}
	} else {
		b = putWords5(b, &h.w, h.n)
	}
	if r.Op >= 0 {
		b = append(b, `,"op":`...)
		if uint32(r.Op) < uint32(len(smallInts)) {
			b = putSmallInt(b, r.Op)
		} else {
			b = appendIntMore(b, r.Op)
		}
	}
	switch r.Ev {
	case EvArrival, EvTransportStart, EvPowerChange, EvEpisodeEnd:
		b = spare(r.appendSpecific(b, p))
	}
	if r.Cell >= 0 {
		if cw := &p.cellWords[r.Cell]; cw.ok {
			b = putWords4(b, &cw.w, cw.n)
		} else {
			b = spare(append(b, p.cellField[r.Cell]...))
		}
		if r.Machine >= 0 && r.Ev != EvTransportStart {
			b = append(b, `,"machine":`...)
			if uint32(r.Machine) < uint32(len(smallInts)) {
				b = putSmallInt(b, r.Machine)
			} else {
				b = appendIntMore(b, r.Machine)
			}
		}
	}
	if r.Ev == EvProcessResume {
		b = append(b, `,"phase":"`...)
		b = append(b, r.Phase.String()...)
		b = append(b, '"')
	}
	l := len(b) // within spareMin of the last spare call
	binary.LittleEndian.PutUint16(b[l:l+2:l+2], '}'|'\n'<<8)
	if line {
		return b[:l+2]
	}
	return b[:l+1]
}

// appendSpecific appends the fields of an arrival, a transport start, a
// power change or an episode end that follow the job and the operation.
func (r *Record) appendSpecific(b []byte, p *Plant) []byte {
	switch r.Ev {
	case EvArrival:
		b = append(b, `,"product":"`...)
		b = append(b, p.Products[r.Product].ID...)
		b = append(b, `","ops":`...)
		b = appendInt(b, r.Ops)
		b = append(b, `,"due":`...)
		b = appendMilli(b, r.Due)
	case EvTransportStart:
		b = append(b, `,"from":"`...)
		if r.From < 0 {
			b = append(b, "dock"...)
		} else {
			b = append(b, p.Cells[r.From].ID...)
		}
		b = append(b, '"')
		if r.Machine >= 0 {
			b = append(b, `,"from_machine":`...)
			b = appendInt(b, r.Machine)
		}
		b = append(b, `,"dur":`...)
		b = appendMilli(b, r.Dur)
	case EvPowerChange:
		b = append(b, `,"kw":`...)
		b = appendMilli(b, r.KW)
	case EvEpisodeEnd:
		b = append(b, `,"status":"`...)
		b = append(b, r.Status...)
		b = append(b, '"')
	}
	return b
}

// appendMilli appends f as AppendFloat does. A power draw is its watts
// over 1000 (float64(w)/1000), and most durations have at most three
// decimals: for f = float64(w)/1000 with w a positive integer and f below
// 1e8, the decimal w/1000 (trailing zeros dropped) is what strconv
// writes, and it is written here from w without the float searches.
//
// Why: f is the float nearest to D = w/1000 (the division is correctly
// rounded), so D parses back to f. Any other decimal that parses back to
// f is within a float spacing of D, under 2^-26 below 1e8; one with as
// few digits as D (or fewer) would be a multiple of 10^-3 too, at least
// 10^-3 from D. So D is the only shortest form, and 'f' is strconv's
// format from 1e-6 to 1e21. Values outside the case go to AppendFloat.
func appendMilli(b []byte, f float64) []byte {
	if !(f >= 0.001 && f < 1e8) {
		return appendLong(b, f)
	}
	w := uint64(f*1000 + 0.5)
	if float64(w)/1000 != f {
		return appendLong(b, f)
	}
	ip, fr := w/1000, w%1000
	b = spare(b)
	l := len(b)
	s := b[l : l+16 : l+16]
	d := digits8(ip) // ip < 10^5
	z := min(uint(bits.TrailingZeros64(d))>>3, 7)
	binary.LittleEndian.PutUint64(s[0:8], (d+zeros8)>>(8*z))
	n := l + 8 - int(z)
	if fr == 0 {
		return b[:n]
	}
	k := 3 // fraction digits, trailing zeros dropped
	if fr%100 == 0 {
		k = 1
	} else if fr%10 == 0 {
		k = 2
	}
	s = b[n : n+8 : n+8]
	binary.LittleEndian.PutUint64(s, (digits8(fr)+zeros8)>>40<<8|'.') // '.' and the last 3 of the 8 digits
	return b[:n+1+k]
}

// appendLong appends f as AppendFloat does, for a value that is rarely a
// short decimal (the due dates that are not: arrival times plus noisy
// work): shortestDigits without the short-decimal tries, then the digits
// eight at a time; integers and values outside its range go to
// AppendFloat.
func appendLong(b []byte, f float64) []byte {
	if c, k, ok := shortestDigits(f, false); ok {
		var buf [decimalBuf]byte
		n := putDecimal(&buf, 0, f < 0, c, k)
		return append(b, buf[:n]...)
	}
	return AppendFloat(b, f)
}

// appendFields appends what follows the time in r's JSON object.
func (r *Record) appendFields(b []byte, p *Plant) []byte {
	if r.Ev < NumEventTypes {
		b = append(b, eventFields[r.Ev]...)
	} else {
		b = append(b, `,"ev":"`...)
		b = append(b, r.Ev.String()...)
		b = append(b, '"')
	}
	if r.Job >= 0 && r.Ev != EvEpisodeStart {
		b = append(b, `,"job":`...)
		b = appendInt(b, r.Job)
	}
	if r.Op >= 0 {
		b = append(b, `,"op":`...)
		b = appendInt(b, r.Op)
	}
	switch r.Ev {
	case EvArrival:
		b = append(b, `,"product":"`...)
		b = append(b, p.Products[r.Product].ID...)
		b = append(b, `","ops":`...)
		b = appendInt(b, r.Ops)
		b = append(b, `,"due":`...)
		b = appendMilli(b, r.Due)
	case EvTransportStart:
		b = append(b, `,"from":"`...)
		if r.From < 0 {
			b = append(b, "dock"...)
		} else {
			b = append(b, p.Cells[r.From].ID...)
		}
		b = append(b, '"')
		if r.Machine >= 0 {
			b = append(b, `,"from_machine":`...)
			b = appendInt(b, r.Machine)
		}
		b = append(b, `,"dur":`...)
		b = AppendFloat(b, r.Dur)
	case EvPowerChange:
		b = append(b, `,"kw":`...)
		b = AppendFloat(b, r.KW)
	case EvEpisodeStart:
		in := p.Inst
		b = append(b, `,"instance":`...)
		b = strconv.AppendQuote(b, in.Name)
		b = append(b, `,"seed":`...)
		b = strconv.AppendUint(b, r.Seed, 10)
		b = append(b, `,"time_unit_s":`...)
		b = AppendFloat(b, in.TimeUnitS)
		b = append(b, `,"power_cap_kw":`...)
		b = AppendFloat(b, p.CapKW())
		b = append(b, `,"transport_kw":`...)
		b = AppendFloat(b, float64(p.transW)/1000)
		b = append(b, `,"carbon_kg_per_kwh":`...)
		b = AppendFloat(b, in.Power.CarbonKgPerKWh)
		b = append(b, `,"wip_cap":`...)
		b = strconv.AppendInt(b, int64(in.WIPCap), 10)
		b = append(b, `,"horizon":`...)
		b = AppendFloat(b, in.Horizon)
		b = append(b, `,"jobs":`...)
		b = appendInt(b, r.Job)
		b = append(b, `,"total_ops":`...)
		b = appendInt(b, r.Ops)
	case EvEpisodeEnd:
		b = append(b, `,"status":"`...)
		b = append(b, r.Status...)
		b = append(b, '"')
	}
	if r.Cell >= 0 {
		b = append(b, p.cellField[r.Cell]...)
		if r.Machine >= 0 && r.Ev != EvTransportStart {
			b = append(b, `,"machine":`...)
			b = appendInt(b, r.Machine)
		}
	}
	if r.Ev == EvProcessResume {
		b = append(b, `,"phase":"`...)
		b = append(b, r.Phase.String()...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendInt appends v in decimal, as strconv.AppendInt does; the job,
// operation and machine numbers of a trace are mostly below 1000, and
// those skip strconv's general conversion.
//
// The one-digit case (operations, machines, the first jobs) is small
// enough to inline; the others go to appendIntMore.
func appendInt(b []byte, v int32) []byte {
	if uint32(v) < 10 {
		return append(b, byte('0'+v))
	}
	return appendIntMore(b, v)
}

// appendIntMore is appendInt for v outside [0, 10).
func appendIntMore(b []byte, v int32) []byte {
	switch {
	case v >= 10 && v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	case v >= 100 && v < 1000:
		return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// AppendFloat formats like encoding/json: the shortest representation that
// parses back to the same float64, so traces round-trip exactly.
//
// Trace durations and power draws are mostly integers or short decimals;
// those take a fast path (appendShortDecimal) that writes the same bytes
// as strconv without its general shortest-digits search. Other values
// from 1 to 2^53 (times with long binary tails) take appendShortest,
// which finds strconv's digits with exact integer arithmetic.
func AppendFloat(b []byte, f float64) []byte {
	if out, ok := appendShortDecimal(b, f); ok {
		return out
	}
	if out, ok := appendShortest(b, f); ok {
		return out
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// pow10 holds the powers of ten that appendShortDecimal tries, all exact
// in float64 and in uint64.
var (
	pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4}
	pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4}
)

// appendShortDecimal writes f as strconv.AppendFloat(b, f, 'f', -1, 64)
// does when f has a round-tripping decimal form with at most 4 fraction
// digits and fewer than 2^52 units of its last digit; it reports false
// (writing nothing) otherwise, and for zero, NaN, infinities and the
// magnitudes AppendFloat writes in exponent form. (Four digits cover the
// instance's figures and the power draws; simulation times with long
// tails fail after four cheap tries and go to strconv.)
//
// Why the bytes are the same: for the smallest k with a decimal c/10^k
// (c an integer) that parses back to |f|, that decimal is the shortest
// representation, since fewer fraction digits mean fewer significant
// digits at a given magnitude. It is the only one with k fraction digits,
// because |f|*10^k < 2^52 makes the spacing of float64 around |f| smaller
// than 10^-k, so strconv has no other candidate to prefer. c/10^k parses
// back to |f| exactly when the correctly rounded division c/10^k equals
// |f| (c and 10^k are exact). The candidates for c are the floor of the
// rounded product |f|*10^k and the next integer: the product's rounding
// error is under 0.25 below 2^52. TestAppendFloatMatchesStrconv and
// FuzzAppendFloat compare the two on random, decimal and edge values.
func appendShortDecimal(b []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1e-6 && a < 1<<52) {
		return b, false
	}
	for k := range pow10f {
		x := a * pow10f[k]
		if x >= 1<<52 {
			return b, false
		}
		c := math.Floor(x)
		if c/pow10f[k] != a {
			if c++; c/pow10f[k] != a {
				continue
			}
		}
		if f < 0 {
			b = append(b, '-')
		}
		u := uint64(c)
		b = decfmt.AppendUint(b, u/pow10u[k])
		if k > 0 {
			frac := u % pow10u[k]
			b = append(b, '.')
			for p := pow10u[k] / 10; p > frac && p > 1; p /= 10 {
				b = append(b, '0')
			}
			b = decfmt.AppendUint(b, frac)
		}
		return b, true
	}
	return b, false
}
