package round

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/proto"
	"github.com/coordbench/coordbench/silo/pyvalue"
	"github.com/coordbench/coordbench/silo/task"
)

// reprOf is a shard as the published str() delivers it (Python repr).
func reprOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	v, err := pyvalue.ParseJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	return pyvalue.Repr(v)
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// informedOf is agent i's content set after reading ds, each delivery's
// Seen standing for its author's content set.
func informedOf(c *carrier, i int, ds []proto.Delivery) []int {
	has := make([]bool, c.in.N)
	has[i] = true
	for _, d := range ds {
		c.carry(i, d.Text, d.Seen, has)
	}
	return setOf(has)
}

// TestInformedRules checks the content rules on crafted deliveries, one
// family at a time: what agent 0 of a 3-agent instance is informed about
// after reading the given contents.
func TestInformedRules(t *testing.T) {
	d := func(text string, seen ...int) proto.Delivery {
		return proto.Delivery{Round: 1, Tool: proto.ToolReceive, From: seen[len(seen)-1], Text: text, Seen: seen}
	}
	i01 := seeded(t, "I-01", 3, 1)
	i07 := seeded(t, "I-07", 3, 1)
	i02 := seeded(t, "I-02", 3, 1)
	ii11 := seeded(t, "II-11", 3, 1)
	ii18 := seeded(t, "II-18", 3, 1)
	iii30 := seeded(t, "III-30", 3, 1)
	iii22 := seeded(t, "III-22", 3, 1)
	ii13 := seeded(t, "II-13", 3, 1)
	i03 := seeded(t, "I-03", 3, 1)
	var votes []string
	json.Unmarshal(i03.Shards[1], &votes)
	tally := map[string]int{}
	for _, v := range votes {
		tally[v]++
	}
	tallyJSON, _ := json.Marshal(tally)
	var tallyText, tallyShort, tallyOff []string
	for v, k := range tally {
		tallyText = append(tallyText, fmt.Sprintf("%s: %d", v, k))
		tallyOff = append(tallyOff, fmt.Sprintf("%s: %d", v, k+10))
	}
	slices.Sort(tallyText)
	tallyShort = tallyText[1:]
	var letters string
	json.Unmarshal(ii13.Shards[1], &letters)
	spaced := strings.Join(strings.Split(letters, ""), " ")

	var floats []float64
	json.Unmarshal(i07.Shards[1], &floats)
	rounded := make([]string, len(floats))
	for k, x := range floats {
		rounded[k] = fmt.Sprintf("%.2f", x)
	}
	sum := 0.0
	for _, x := range floats {
		sum += x
	}
	oneDecimal := make([]string, len(floats))
	for k, x := range floats {
		oneDecimal[k] = fmt.Sprintf("%.1f", x)
	}
	partial12, err := task.Solve(i01.Task, i01.Shards[1:], nil) // max over shards 1 and 2
	if err != nil {
		t.Fatal(err)
	}
	var ii11Carry []int
	json.Unmarshal(ii11.Expected[0], &ii11Carry)
	var rows struct {
		A [][]int `json:"A_rows"`
		B [][]int `json:"B_matrix"`
	}
	json.Unmarshal(iii30.Shards[1], &rows)

	cases := []struct {
		name string
		in   *task.Instance
		ds   []proto.Delivery
		want []int
	}{
		{"nothing read", i01, nil, []int{0}},
		{"chat", i01, []proto.Delivery{d("hi", 1), d("hello from agent 2", 2)}, []int{0}},
		{"shard as JSON", i01, []proto.Delivery{d(string(i01.Shards[1]), 1)}, []int{0, 1}},
		{"shard as str()", i01, []proto.Delivery{d("my data: "+reprOf(t, i01.Shards[2]), 2)}, []int{0, 2}},
		{"shard relayed", i01, []proto.Delivery{d(string(i01.Shards[1])+" and "+reprOf(t, i01.Shards[2]), 1, 2)}, []int{0, 1, 2}},
		// The author never saw shard 2: its items are not credited.
		{"items without provenance", i01, []proto.Delivery{d(string(i01.Shards[2]), 1)}, []int{0}},
		{"part of a shard", i01, []proto.Delivery{d(string(i01.Shards[1])[:20], 1)}, []int{0}},
		// Decomposable task: the max over the author's set carries the set.
		{"partial max", i01, []proto.Delivery{d("max of 1 and 2 is "+string(partial12[0]), 1, 2)}, []int{0, 1, 2}},
		{"final answer", i01, []proto.Delivery{d("ANSWER "+string(i01.Expected[0]), 0, 1, 2)}, []int{0, 1, 2}},
		{"final answer, author lacks a shard", i01, []proto.Delivery{d("ANSWER "+string(i01.Expected[0]), 1)}, []int{0}},
		// Floats: full repr, or rounded to two or more decimals.
		{"floats repr", i07, []proto.Delivery{d(reprOf(t, i07.Shards[1]), 1)}, []int{0, 1}},
		{"floats rounded", i07, []proto.Delivery{d(strings.Join(rounded, ", "), 1)}, []int{0, 1}},
		{"floats one decimal", i07, []proto.Delivery{d(strings.Join(oneDecimal, ", "), 1)}, []int{0}},
		// I-07 is not decomposable: a subset mean is not credited.
		{"mean of a shard", i07, []proto.Delivery{d("mean 50.0", 1)}, []int{0}},
		// I-07: the sum and the count of the author's numbers carry them.
		{"sum and count", i07, []proto.Delivery{d(fmt.Sprintf("sum %.2f over %d numbers", sum, len(floats)), 1)}, []int{0, 1}},
		{"sum without count", i07, []proto.Delivery{d(fmt.Sprintf("sum %.2f", sum), 1)}, []int{0}},
		{"count without sum", i07, []proto.Delivery{d(fmt.Sprintf("%d numbers", len(floats)), 1)}, []int{0}},
		// II-13: a piece's letters one by one, or as a list of letters.
		{"letters spaced", ii13, []proto.Delivery{d(spaced, 1)}, []int{0, 1}},
		{"letters as a list", ii13, []proto.Delivery{d(fmt.Sprintf("%q", strings.Split(letters, "")), 1)}, []int{0, 1}},
		{"letters reversed", ii13, []proto.Delivery{d(reverse(spaced), 1)}, []int{0}},
		// I-03: the tally of the author's votes, as JSON or as text; not a
		// tally that misses a candidate or miscounts.
		{"tally as JSON", i03, []proto.Delivery{d(string(tallyJSON), 1)}, []int{0, 1}},
		{"tally as text", i03, []proto.Delivery{d(strings.Join(tallyText, ", "), 1)}, []int{0, 1}},
		{"tally short of a candidate", i03, []proto.Delivery{d(strings.Join(tallyShort, ", "), 1)}, []int{0}},
		{"tally miscounted", i03, []proto.Delivery{d(strings.Join(tallyOff, ", "), 1)}, []int{0}},
		// Strings, with multiplicity.
		{"words", i02, []proto.Delivery{d(reprOf(t, i02.Shards[1]), 1)}, []int{0, 1}},
		{"word list summary", i02, []proto.Delivery{d("apple banana cherry date elderberry fig grape", 1)}, []int{0}},
		// Prefix task: the carry after shard 0 (agent 0's last prefix sum)
		// carries shard 0; here agent 0 reads it back from agent 1.
		{"prefix carry", ii11, []proto.Delivery{d(fmt.Sprintf("carry %d", ii11Carry[len(ii11Carry)-1]), 0, 1)}, []int{0}},
		// Dict answer in Python repr (int keys), nested in a message.
		{"dict answer as repr", ii18, []proto.Delivery{d("final: "+reprOf(t, ii18.Expected[0])+" ok", 0, 1, 2)}, []int{0, 1, 2}},
		// III-30: the A row is the data; the shared B is not required.
		{"matrix row only", iii30, []proto.Delivery{d(fmt.Sprint("row 1: ", rows.A), 1)}, []int{0, 1}},
		{"matrix B only", iii30, []proto.Delivery{d(fmt.Sprint("B ", rows.B), 1)}, []int{0}},
		// A median of a subset is not a partial result of III-22.
		{"subset median", iii22, []proto.Delivery{d("median so far 500", 1, 2)}, []int{0}},
	}
	for _, c := range cases {
		cr := newCarrier(c.in)
		if got := informedOf(cr, 0, c.ds); !slices.Equal(got, c.want) {
			t.Errorf("%s: informed %v, want %v", c.name, got, c.want)
		}
	}

	// Prefix carry seen from agent 2: the carry after shard 1, from an
	// author that saw 0 and 1, informs agent 2 about both.
	var carry1 []int
	json.Unmarshal(ii11.Expected[1], &carry1)
	cr := newCarrier(ii11)
	if got := informedOf(cr, 2, []proto.Delivery{d(fmt.Sprint("prefix total ", carry1[len(carry1)-1]), 0, 1)}); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("prefix carry to agent 2: informed %v", got)
	}
}

// TestEmptyVoteTally: a tally rule over votes that include an empty string
// (a task file may hold one) ends and credits nothing.
func TestEmptyVoteTally(t *testing.T) {
	in := seeded(t, "I-03", 2, 1)
	in.Shards[1] = json.RawMessage(`["", "Candidate_A"]`)
	c := newCarrier(in)
	if got := informedOf(c, 0, []proto.Delivery{{Text: `{"": 1, "Candidate_B": 1}`, Seen: []int{1}}}); !slices.Equal(got, []int{0}) {
		t.Errorf("informed %v, want [0]", got)
	}
}

// TestBracketGroupsBounded: a content of unbalanced brackets is parsed in
// bounded time and yields nothing.
func TestBracketGroupsBounded(t *testing.T) {
	ct := newContent(strings.Repeat("[{", 20000) + strings.Repeat("]", 3))
	if vs := ct.parse(); len(vs) != 0 {
		t.Fatalf("parsed %d values", len(vs))
	}
	in := seeded(t, "II-18", 2, 1)
	if ct.mentions(in.Task, in.Expected[0]) {
		t.Fatal("brackets mention an answer")
	}
}

// BenchmarkInformedSets: the content rules over a reference run at N = 50
// (the gatherer reads 49 shards, everyone reads the answers broadcast).
func BenchmarkInformedSets(b *testing.B) {
	in, err := task.Seeded("III-21", 50, 1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Instance: in, Protocol: proto.Broadcast, OnEnd: func(st *proto.Store) error {
		b.ResetTimer()
		for range b.N {
			agentViews(in, st, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		return nil
	}}
	if _, err := Run(b.Context(), cfg, NewReferenceTeam(50)); err != nil {
		b.Fatal(err)
	}
}

// FuzzContent: the content rules read model output; any text is tokenized,
// parsed and matched without panicking.
func FuzzContent(f *testing.F) {
	for _, s := range []string{"hi", "[1, 2, 3]", "{'a': [1.5, True]}", "max 985 of [{]}", "-0.00 1e999 007 [[[", `{"0": 1, "1": 2}`} {
		f.Add(s)
	}
	in18, _ := task.Seeded("II-18", 2, 1)
	in07, _ := task.Seeded("I-07", 2, 1)
	in03, _ := task.Seeded("I-03", 2, 1)
	f.Fuzz(func(t *testing.T, text string) {
		for _, in := range []*task.Instance{in18, in07, in03} {
			c := newCarrier(in)
			informedOf(c, 0, []proto.Delivery{{Round: 1, Tool: proto.ToolReceive, From: 1, Text: text, Seen: []int{0, 1}}})
		}
	})
}
