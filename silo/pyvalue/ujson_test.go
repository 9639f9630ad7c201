package pyvalue

import (
	"math"
	"testing"
)

// The expected texts are ujson's, as its own test suite states them
// (tests/test_ujson.py: floats equal json.dumps's except the exponents
// -9 to -5, which Python pads; escapes; compact dumps) and as srsly calls
// it (escape_forward_slashes=False).
func TestEncodeUJSON(t *testing.T) {
	d := &Dict{}
	d.Set("success", true)
	d.Set("content", ListOf(int64(1), 2.5, "é→/", nil))
	d.Set("metadata", &Dict{Keys: []any{int64(3)}, Vals: []any{1e-05}})
	cases := []struct {
		v    any
		want string
	}{
		{d, `{"success":true,"content":[1,2.5,"\u00e9\u2192/",null],"metadata":{"3":1e-5}}`},
		{ListOf(int64(1), int64(2), int64(3)), `[1,2,3]`},
		{"A string \\ / \b \f \n \r \t </script> &", `"A string \\ / \b \f \n \r \t </script> &"`},
		{"\U0001f42e\u273f", `"\ud83d\udc2e\u273f"`},
		{"\x00\x19\x7f", `"\u0000\u0019` + "\x7f" + `"`},
		{1e-10, "1e-10"}, {1e-4, "0.0001"}, {1e10, "10000000000.0"}, {1e15, "1000000000000000.0"},
		{1e16, "1e+16"}, {1e30, "1e+30"}, {1.5e-7, "1.5e-7"}, {1e100, "1e+100"}, {5e-324, "5e-324"},
		{math.Copysign(0, -1), "-0.0"}, {math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{TupleOf(int64(1)), "[1]"},
	}
	for _, c := range cases {
		if got := string(EncodeUJSON(c.v)); got != c.want {
			t.Errorf("EncodeUJSON(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// BenchmarkEncodeUJSON encodes a read_file result holding 100 floats and
// 100 short strings, beside Canon (json.dumps compact) of the same value.
func BenchmarkEncodeUJSON(b *testing.B) {
	v, err := ParseJSON([]byte(sampleResult()))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		enc  func(any) []byte
	}{{"ujson", EncodeUJSON}, {"canon", Canon}} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n = len(c.enc(v))
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

func sampleResult() string {
	s := `{"success":true,"content":[`
	for i := range 100 {
		if i > 0 {
			s += ","
		}
		s += `1.25e-` + string(rune('1'+i%9)) + `,"wört` + string(rune('a'+i%26)) + `"`
	}
	return s + `],"metadata":{"modified_by":3,"modified_at_round":2}}`
}
