package pyvalue

import (
	"math"
	"testing"
)

func TestFloatRepr(t *testing.T) {
	// Expected values printed by CPython 3.11's repr().
	cases := map[float64]string{
		1e16: "1e+16", 1e-5: "1e-05", 0.0001: "0.0001", 123456789012345678.0: "1.2345678901234568e+17",
		100.0: "100.0", math.Copysign(0, -1): "-0.0", 1.5: "1.5", 5e-324: "5e-324",
		1234567890123456.0: "1234567890123456.0", 0.30000000000000004: "0.30000000000000004", 1e22: "1e+22",
		12.0e-7: "1.2e-06", 2.5e-05: "2.5e-05", 99.99999999999999: "99.99999999999999", -7.25: "-7.25",
	}
	for f, want := range cases {
		if got := FloatRepr(f); got != want {
			t.Errorf("repr(%g) = %s, want %s", f, got, want)
		}
	}
}

func TestStrRepr(t *testing.T) {
	cases := map[string]string{
		"it's":                    `"it's"`,
		`a'b"c`:                   `'a\'b"c'`,
		"tab\there":               `'tab\there'`,
		"\x00\x7f\u00a0\u00ad é→": `'\x00\x7f\xa0\xad é→'`,
		`x\y`:                     `'x\\y'`,
	}
	for s, want := range cases {
		if got := StrRepr(s); got != want {
			t.Errorf("repr(%q) = %s, want %s", s, got, want)
		}
	}
	if got := Repr(TupleOf(int64(1))); got != "(1,)" {
		t.Errorf("1-tuple: %s", got)
	}
	if got := Repr(&Dict{Keys: []any{int64(3), "a"}, Vals: []any{nil, true}}); got != "{3: None, 'a': True}" {
		t.Errorf("dict: %s", got)
	}
}
