package untrusted

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"-1.5":               "-1.5",
		"+3":                 "+3",
		"1e-05":              "1e-05",
		"-Inf":               "-Inf",
		"NaN":                "NaN",
		"centralized":        "centralized",
		"=HYPERLINK(\"x\")":  "'=HYPERLINK(\"x\")",
		"+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
		"-2+3+cmd|'/C calc'": "'-2+3+cmd|'/C calc'",
		"@SUM(A1)":           "'@SUM(A1)",
		"\t=1":               "'\t=1",
		"\r=1":               "␍=1", // Printable's picture: no trigger
		"'quoted":            "''quoted",
		"--":                 "'--",
		"-":                  "-",
		"-0x1p3":             "'-0x1p3",
		"model\x1b]0;t\x07":  "model␛]0;t␇",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// A row written by CSVWriter reads back, through CSVValues, as it was
// given (but for terminal controls, which Printable shows).
func TestCSVWriterRoundTrip(t *testing.T) {
	rows := [][]string{{"model", "G_mk", "note"}, {"=1+1", "-3.25", "'x"}, {"@a", "0", "plain, with comma"}}
	var b bytes.Buffer
	w := NewCSVWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "'=1+1,-3.25,''x") {
		t.Errorf("written: %q", b.String())
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if got := strings.Join(CSVValues(r), "|"); got != strings.Join(rows[i], "|") {
			t.Errorf("row %d read back as %q, want %q", i, got, strings.Join(rows[i], "|"))
		}
	}
}

func FuzzCSVCell(f *testing.F) {
	for _, s := range []string{"=1", "-1", "'", "a", "\t", "-Inf", "1e5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CSVCell(s)
		if c != "" && strings.ContainsRune(csvTriggers, rune(c[0])) && !isNumber(c) {
			t.Fatalf("CSVCell(%q) = %q begins with a formula trigger", s, c)
		}
		if CSVValue(c) != Printable(s) {
			t.Fatalf("CSVValue(CSVCell(%q)) = %q, want %q", s, CSVValue(c), Printable(s))
		}
	})
}
