package task

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/coordbench/coordbench/silo/pyvalue"
)

type scoreCase struct {
	name     string
	task     string
	gold     string
	got      string // "" = no submission
	correct  bool
	partial  float64
	fine     float64 // NaN: same as partial
	pub      float64 // NaN: same as partial
	pubCrash bool
}

var nan = math.NaN()

var scoreCases = []scoreCase{
	// Level I: numeric within a relative 1 %, gold 0 needs 0; others exact.
	{"int exact", "I-01", "42", "42", true, 1, nan, nan, false},
	{"int as string", "I-01", "42", `"42"`, true, 1, nan, nan, false},
	{"int padded string", "I-01", "42", `" 42\n"`, true, 1, nan, nan, false},
	{"int as float", "I-01", "42", "42.0", true, 1, nan, nan, false},
	{"int as float string", "I-01", "42", `"42.0"`, true, 1, nan, nan, false},
	{"int underscores", "I-01", "1000", `"1_000"`, true, 1, nan, nan, false},
	{"int arabic digits", "I-01", "12", `"١٢"`, true, 1, nan, nan, false},
	{"int exponent string", "I-01", "1000", `"1e3"`, true, 1, nan, nan, false},
	{"hex is a string", "I-01", "16", `"0x10"`, false, 0, nan, nan, false},
	{"within 1 %", "I-01", "42", "42.3", false, 1, nan, nan, false},
	{"outside 1 %", "I-01", "42", "43", false, 0, nan, nan, false},
	{"checksum ±1 % quirk", "I-06", "200", "202", false, 1, nan, nan, false},
	{"negative gold", "I-01", "-500", "-504", false, 1, nan, nan, false},
	{"gold 0 needs 0", "I-05", "0", "0.001", false, 0, nan, nan, false},
	{"gold 0 and 0.0", "I-05", "0", "0.0", true, 1, nan, nan, false},
	{"huge int", "I-01", "42", "1" + string(make([]byte, 0)) + "000000000000000000000000000000000000000", false, 0, nan, nan, false},
	{"huge int vs float gold", "I-07", "53.6", "1e400", false, 0, nan, nan, false},
	{"10^400 vs float gold: Python's a - g overflows", "I-07", "53.6", "10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", false, 0, nan, 0, true},
	{"10^400 vs int gold: no float conversion", "I-01", "42", "10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", false, 0, nan, nan, false},
	{"10^400 vs float gold 0: the zero branch compares only", "I-07", "0.0", "10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", false, 0, nan, nan, false},
	{"no submission", "I-01", "42", "", false, 0, nan, nan, false},
	{"null", "I-01", "42", "null", false, 0, nan, nan, false},
	{"garbage bytes", "I-01", "42", "{not json", false, 0, nan, nan, false},
	{"words", "I-01", "42", `"the answer is 42"`, false, 0, nan, nan, false},
	{"float no tolerance in S", "I-07", "53.6", `"53.60"`, true, 1, nan, nan, false},
	{"float off", "I-07", "53.6", `"53.599"`, false, 1, nan, nan, false},
	{"float far", "I-07", "53.6", "54.2", false, 0, nan, nan, false},
	{"nan", "I-07", "53.6", `"nan"`, false, 0, nan, nan, false},
	{"bool true", "I-04", "true", "true", true, 1, nan, nan, false},
	{"bool as 1", "I-04", "true", "1", true, 1, nan, nan, false},
	{"bool as 1.005 (P only)", "I-04", "true", "1.005", false, 1, nan, nan, false},
	{"bool string is a string", "I-04", "true", `"true"`, false, 0, nan, nan, false},
	{"false as 0", "I-04", "false", "0", true, 1, nan, nan, false},
	{"false vs true", "I-04", "false", "true", false, 0, nan, nan, false},
	{"string", "I-03", `"Candidate_A"`, `" Candidate_A "`, true, 1, nan, nan, false},
	{"string case", "I-03", `"Candidate_A"`, `"candidate_a"`, false, 0, nan, nan, false},
	{"list exact", "I-09", "[3,2,1]", "[3,2,1]", true, 1, nan, nan, false},
	{"list as JSON text", "I-09", "[3,2,1]", `"[3, 2, 1]"`, true, 1, nan, nan, false},
	{"list of strings", "I-09", "[3,2,1]", `["3","2.0"," 1"]`, true, 1, nan, nan, false},
	{"list order", "I-09", "[3,2,1]", "[1,2,3]", false, 0, nan, nan, false},
	{"python list text", "I-09", "[3,2,1]", `"(3, 2, 1)"`, false, 0, nan, nan, false},

	// Level II: positional matches over zip ÷ len(gold); others exact.
	{"segment exact", "II-11", "[1,3,6]", "[1,3,6]", true, 1, nan, nan, false},
	{"segment one wrong", "II-11", "[1,3,6]", "[1,3,7]", false, 2.0 / 3, nan, nan, false},
	{"segment extra ignored", "II-11", "[1,3,6]", "[1,3,6,10]", false, 1, nan, nan, false},
	{"segment short", "II-11", "[1,3,6]", "[1]", false, 1.0 / 3, nan, nan, false},
	{"segment shifted", "II-11", "[1,3,6]", "[0,1,3,6]", false, 0, nan, nan, false},
	{"segment empty", "II-11", "[1,3,6]", "[]", false, 0, nan, nan, false},
	{"empty gold empty answer", "II-17", "[]", "[]", true, 1, nan, nan, false},
	{"empty gold answer", "II-17", "[]", "[1]", false, 0, nan, nan, false},
	{"text list", "II-11", "[1,3,6]", `"1,3,6"`, false, 0, nan, nan, false},
	{"moving average floats", "II-12", "[1.33,2.0]", `[1.33,"2"]`, true, 1, nan, nan, false},
	{"level II scalar exact", "II-13", "7", "7.0", true, 1, nan, nan, false},
	{"level II scalar no tolerance", "II-16", "100", "101", false, 0, nan, nan, false},
	{"dict order free", "II-18", `{"4":0,"8":1}`, `{"8":1,"4":0}`, true, 1, 1, nan, false},
	{"dict as JSON text", "II-18", `{"4":0,"8":1}`, `"{\"4\": 0, \"8\": 1}"`, true, 1, 1, nan, false},
	{"dict values not normalised", "II-18", `{"4":0,"8":1}`, `{"4":"0","8":1}`, false, 0, 0.5, nan, false},
	{"dict missing key", "II-18", `{"4":0,"8":1}`, `{"4":0}`, false, 0, 0.5, nan, false},
	{"dict extra key", "II-18", `{"4":0,"8":1}`, `{"4":0,"8":1,"9":2}`, false, 0, 2.0 / 3, nan, false},
	{"dict int value as float", "II-18", `{"4":0,"8":1}`, `{"4":0.0,"8":1}`, true, 1, 1, nan, false},
	{"dict vs list", "II-18", `{"4":0}`, `[0]`, false, 0, 0, nan, false},

	// Level III: LIS over gold positions; our multiset fix vs published.
	{"sort exact", "III-21", "[1,2,3]", "[1,2,3]", true, 1, nan, nan, false},
	{"sort exact with repeats", "III-21", "[1,2,2,3]", "[1,2,2,3]", true, 1, nan, 0.75, false},
	{"sort reversed with repeats", "III-21", "[1,2,2,3]", "[3,2,2,1]", false, 0.5, nan, 0.25, false},
	{"sort missing one", "III-21", "[1,2,2,3]", "[1,2,3]", false, 0.75, nan, 0.75, false},
	{"sort too many repeats", "III-21", "[1,2,2,3]", "[1,2,2,2,2,3]", false, 1, nan, 0.75, false},
	{"sort foreign values", "III-21", "[1,2,3]", "[9,1,8,2,7,3]", false, 1, nan, nan, false},
	{"sort swapped", "III-21", "[1,2,3,4]", "[2,1,4,3]", false, 0.5, nan, nan, false},
	{"sort unhashable element", "III-21", "[1,2,3]", "[[1],2,3]", false, 2.0 / 3, nan, 0, true},
	{"sort not a list", "III-21", "[1,2,3]", "123", false, 0, nan, nan, false},
	{"median", "III-22", "500", `"500"`, true, 1, nan, nan, false},
	{"median off by one, no tolerance", "III-22", "500", "501", false, 0, nan, nan, false},
	{"matrix exact", "III-30", "[[1,2],[3,4]]", "[[1,2],[3,4]]", true, 1, 1, 0, true},
	{"matrix one cell", "III-30", "[[1,2],[3,4]]", "[[1,2],[3,5]]", false, 0.5, 0.75, 0, true},
	{"matrix rows swapped", "III-30", "[[1,2],[3,4]]", "[[3,4],[1,2]]", false, 0.5, 0, 0, true},
	{"matrix missing row", "III-30", "[[1,2],[3,4]]", "[[1,2]]", false, 0.5, 0.5, 0, true},
	{"matrix extra column", "III-30", "[[1,2],[3,4]]", "[[1,2,0],[3,4]]", false, 0.5, 0.8, 0, true},
	{"matrix flat answer", "III-30", "[[1,2],[3,4]]", "[1,2,3,4]", false, 0, 0, 0, true},
	{"matrix string cells", "III-30", "[[1,2],[3,4]]", `[["1","2"],[3,"4.0"]]`, true, 1, 1, 0, true},
	{"matrix as text", "III-30", "[[1,2],[3,4]]", `"[[1, 2], [3, 4]]"`, true, 1, 1, 0, true},
	{"matrix not a list", "III-30", "[[1,2],[3,4]]", `"C"`, false, 0, 0, 0, false},
	{"centroids", "III-25", "[[12.5,40.01],[60.2,7.75],[88.0,91.3]]", "[[12.5,40.01],[60.2,7.75],[88,91.3]]", true, 1, 1, 0, true},
	{"centroids rounding", "III-25", "[[12.5,40.01],[60.2,7.75],[88.0,91.3]]", "[[12.5,40.01],[60.2,7.75],[88.0,91.31]]", false, 2.0 / 3, 5.0 / 6, 0, true},
	{"top pairs", "III-27", "[[4,1,2.0313],[0,5,1.9874],[4,5,1.9602]]", "[[0,5,1.9874],[4,5,1.9602]]", false, 2.0 / 3, 1.0 / 9, 0, true},
	{"load balance dict", "III-29", `{"variance":0.25,"max_load":10,"min_load":9}`, `{"variance":0.25,"max_load":10,"min_load":8}`, false, 0, 2.0 / 3, nan, false},
	{"bfs dict", "III-24", `{"0":0,"1":-1}`, `{"0":0,"1":-1}`, true, 1, 1, nan, false},
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestScoreTable(t *testing.T) {
	for _, c := range scoreCases {
		task := byID(c.task)
		var got json.RawMessage
		if c.got != "" {
			got = json.RawMessage(c.got)
		}
		gold := json.RawMessage(c.gold)
		if ok := Correct(task, gold, got); ok != c.correct {
			t.Errorf("%s: Correct = %v, want %v", c.name, ok, c.correct)
		}
		if q := Partial(task, gold, got); !approx(q, c.partial) {
			t.Errorf("%s: Partial = %v, want %v", c.name, q, c.partial)
		}
		fine := c.fine
		if math.IsNaN(fine) {
			fine = c.partial
		}
		if q := PartialFine(task, gold, got); !approx(q, fine) {
			t.Errorf("%s: PartialFine = %v, want %v", c.name, q, fine)
		}
		pub := c.pub
		if math.IsNaN(pub) {
			pub = c.partial
		}
		q, err := PartialPublished(task, gold, got)
		if c.pubCrash {
			if !errors.Is(err, ErrPublishedCrash) && !errors.Is(err, ErrPublishedOverflow) {
				t.Errorf("%s: PartialPublished error %v, want the published crash", c.name, err)
			}
		} else if err != nil || !approx(q, pub) {
			t.Errorf("%s: PartialPublished = %v, %v; want %v", c.name, q, err, pub)
		}
	}
}

// TestScorePerfectTeam: Solve's answers are correct with P = 1 for every
// agent of every official instance (the fixes make III-21 perfect).
func TestScorePerfectTeam(t *testing.T) {
	for _, task := range All() {
		for _, n := range []int{2, 10, 100} {
			in, err := Official(task.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			answers, err := in.Solve()
			if err != nil {
				t.Fatal(err)
			}
			for i := range answers {
				if n == 100 && i > 0 && i < n-1 && !task.Segmented {
					continue // the same global answer; agent 0 and the last suffice
				}
				if !Correct(task, in.Expected[i], answers[i]) || Partial(task, in.Expected[i], answers[i]) != 1 ||
					PartialFine(task, in.Expected[i], answers[i]) != 1 {
					t.Fatalf("%s n=%d agent %d: the perfect answer does not score 1", task.ID, n, i)
				}
			}
		}
	}
}

// FuzzScore: no panic on any answer bytes, scores within [0, 1], and the
// scores agree with S where they must.
func FuzzScore(f *testing.F) {
	for _, c := range scoreCases {
		f.Add(c.task, c.gold, []byte(c.got))
	}
	f.Add("III-21", "[1,2,2,3]", []byte(`[[[[[[[[[[1]]]]]]]]]]`))
	f.Add("II-18", `{"1":0}`, []byte(`{"1":0,"1":1}`))
	f.Add("I-01", "5", []byte(`"\ud800"`))
	f.Add("I-01", "5", []byte(`"-Infinity"`))
	f.Add("III-30", "[[1]]", []byte(`[NaN, Infinity, -Infinity, 1e999, -0.0]`))
	f.Fuzz(func(t *testing.T, id, gold string, got []byte) {
		task, err := Lookup(id)
		if err != nil {
			return
		}
		g, a := json.RawMessage(gold), json.RawMessage(got)
		ok := Correct(task, g, a)
		p := Partial(task, g, a)
		fine := PartialFine(task, g, a)
		pub, _ := PartialPublished(task, g, a)
		for _, q := range []float64{p, fine, pub} {
			if q < 0 || q > 1 || math.IsNaN(q) {
				t.Fatalf("score %v outside [0, 1]", q)
			}
		}
		if gv, err := pyvalue.ParseJSON(g); err == nil {
			if av, err := pyvalue.ParseJSON(a); err == nil {
				gv, av = normalize(gv), normalize(av)
				if keys := (eqKeys{}); (keys.key(gv) == keys.key(av)) != pyEq(gv, av) {
					t.Fatalf("eqKey and pyEq disagree on %s and %s", g, a)
				}
			}
		}
		if ok && (p != 1 || fine != 1) {
			t.Fatalf("correct answer with P = %v, fine = %v", p, fine)
		}
		if (task.Output == OutDict || task.Output == OutMatrix) && fine == 1 && !ok {
			if v, err := pyvalue.ParseJSON(g); err == nil && !pyEq(v, v) {
				return // a gold that is not equal to itself (NaN)
			}
			t.Fatalf("fine score 1 for an incorrect answer")
		}
	})
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		in, want string // JSON in, canonical JSON of normalize(in)
	}{
		{`" 7 "`, `7`},
		{`"+5"`, `5`},
		{`"-0"`, `0`},
		{`"1__0"`, `"1__0"`},
		{`"_1"`, `"_1"`},
		{`"1."`, `1.0`},
		{`".5"`, `0.5`},
		{`"iNfInItY"`, `Infinity`},
		{`"1_0.5"`, `10.5`},
		{`"1.5_"`, `"1.5_"`},
		{`"１２"`, `12`},
		{`"\u00a012\u2003"`, `12`},
		{`"\u001f12"`, `12`},
		{`"[1, \"2\", [\"3\"]]"`, `[1,2,[3]]`},
		{`"{\"a\": \"1\"}"`, `{"a":"1"}`},
		{`["x", {"a": "1"}]`, `["x",{"a":"1"}]`},
		{`"[1, 2"`, `"[1, 2"`},
		{`"123456789012345678901234567890"`, `123456789012345678901234567890`},
	}
	for _, c := range cases {
		v, err := pyvalue.ParseJSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := string(pyvalue.Canon(normalize(v))); got != c.want {
			t.Errorf("normalize(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestPyEq(t *testing.T) {
	eq := func(a, b string) bool {
		x, _ := pyvalue.ParseJSON([]byte(a))
		y, _ := pyvalue.ParseJSON([]byte(b))
		return pyEq(x, y)
	}
	for _, c := range [][2]string{{"1", "1.0"}, {"true", "1"}, {"false", "0.0"}, {"[1,2]", "[1.0,2]"},
		{`{"a":1,"b":2}`, `{"b":2.0,"a":1}`}, {"9007199254740992", "9007199254740992.0"}, {"null", "null"}} {
		if !eq(c[0], c[1]) {
			t.Errorf("%s != %s", c[0], c[1])
		}
	}
	for _, c := range [][2]string{{"9007199254740993", "9007199254740992.0"}, {"1", `"1"`}, {"[1]", "[1,1]"},
		{`{"a":1}`, `{"a":1,"b":1}`}, {"NaN", "NaN"}, {"null", "0"}, {"[]", "{}"}} {
		if eq(c[0], c[1]) {
			t.Errorf("%s == %s", c[0], c[1])
		}
	}
}
