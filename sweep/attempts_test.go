package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/suiterun"
)

func appendAll(t *testing.T, dir string, att ...Attempt) {
	t.Helper()
	log, err := OpenAttemptLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range att {
		if err := log.Append(a); err != nil {
			t.Fatal(err)
		}
	}
}

// The ledger reads back what was appended, from many goroutines at
// once, each line whole; a line written twice (a result delivered again)
// counts once.
func TestAttemptLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	log, err := OpenAttemptLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if err := log.Append(Attempt{ID: NewAttemptID(), CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: 2, InputTokens: 100, OutputTokens: 7}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	dup := Attempt{ID: "same", CaseID: "d", Outcome: AttemptReturned, Usage: Usage{Calls: 1}}
	appendAll(t, dir, dup, dup)
	att, err := ReadAttempts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total Usage
	for _, a := range att {
		total.Add(a.Usage)
	}
	if len(att) != 51 || total.Calls != 101 || total.InputTokens != 5000 || total.OutputTokens != 350 {
		t.Errorf("%d attempts, usage %+v: want 51 attempts (the duplicate once), 101 calls, 5000 and 350 tokens", len(att), total)
	}
}

// A run killed while appending leaves a last line cut short: the reader
// leaves it out, and the next run's log cuts it off before appending, so
// the file stays readable. Any other malformed line is an error naming
// the file and line.
func TestAttemptLogTornTail(t *testing.T) {
	dir := t.TempDir()
	appendAll(t, dir, Attempt{ID: "a1", CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: 3}})
	path := filepath.Join(dir, FileAttempts)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"attempt":"a2","case_id":"c","outc`)
	f.Close()
	if att, err := ReadAttempts(dir); err != nil || len(att) != 1 {
		t.Fatalf("torn tail: %v, %v", att, err)
	}
	appendAll(t, dir, Attempt{ID: "a3", CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: 4}})
	att, err := ReadAttempts(dir)
	if err != nil || len(att) != 2 || att[1].ID != "a3" || att[1].Calls != 4 {
		t.Fatalf("after the next append: %+v, %v", att, err)
	}

	for name, line := range map[string]string{
		"negative":  `{"attempt":"x","case_id":"c","outcome":"failed","calls":-5}`,
		"outcome":   `{"attempt":"x","case_id":"c","outcome":"won","calls":1}`,
		"no id":     `{"case_id":"c","outcome":"failed","calls":1}`,
		"unknown":   `{"attempt":"x","case_id":"c","outcome":"failed","calls":1,"usd":-9}`,
		"not JSON":  `calls=1`,
		"overflows": `{"attempt":"x","case_id":"c","outcome":"failed","input_tokens":9223372036854775807}`,
	} {
		bad := t.TempDir()
		os.WriteFile(filepath.Join(bad, FileAttempts), []byte(`{"attempt":"ok","case_id":"c","outcome":"failed"}`+"\n"+line+"\n"), 0o644)
		if _, err := ReadAttempts(bad); err == nil || !strings.Contains(err.Error(), FileAttempts+":2:") {
			t.Errorf("%s: %v, want an error at line 2", name, err)
		}
	}
	if err := (&AttemptLog{path: filepath.Join(t.TempDir(), FileAttempts)}).Append(Attempt{ID: "x", CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: -1}}); err == nil {
		t.Error("a negative attempt was appended")
	}
}

// Discarded prices the ledger's attempts under their case's model, takes
// a failed case that no failed line names from its failed/<id>/ (a
// directory from before the ledger; a returned line does not name it),
// counts an attempt once however many directories hold it, and refuses
// a line it cannot price. MigrateFailed writes such a failed/<id>/ into
// the ledger once, after which the figures are the same.
func TestDiscardedLedgerAndOldFailedCases(t *testing.T) {
	dir := t.TempDir()
	appendAll(t, dir,
		Attempt{ID: "1", CaseID: "a", Outcome: AttemptFailed, Usage: Usage{Calls: 2, InputTokens: 10}},
		Attempt{ID: "2", CaseID: "a", Outcome: AttemptReturned, Usage: Usage{Calls: 1, InputTokens: 5}},
		Attempt{ID: "3", CaseID: "b", Outcome: AttemptReturned, Usage: Usage{Calls: 1, InputTokens: 7}})
	// failed/a/ is the ledger's attempt 1; failed/b/ is older than the ledger.
	for _, id := range []string{"a", "b"} {
		d := filepath.Join(dir, suiterun.FailedDir, id)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, harness.FileDecisions), []byte(`{"step":0,"agent_id":"plant","prompt_tokens":40,"completion_tokens":4,"calls":1}`+"\n"), 0o644)
	}
	models := map[string]string{"a": "m1", "b": "m2"}
	total := func(dirs ...string) (n int, in int64) {
		t.Helper()
		got, err := Discarded(BenchmarkDes, dirs, models)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			n++
			in += c.Usage.InputTokens
		}
		return n, in
	}
	if n, in := total(dir); n != 4 || in != 10+5+7+40 {
		t.Errorf("%d attempts, %d input tokens: want 4 and 62 (the ledger's three and b's failed/)", n, in)
	}
	if n, in := total(dir, dir); n != 4 || in != 62 {
		t.Errorf("the directory given twice: %d attempts, %d input tokens; want each once", n, in)
	}
	if _, err := Discarded(BenchmarkDes, []string{dir}, map[string]string{"b": "m2"}); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a ledger line of a case without a model: %v", err)
	}
	for range 2 {
		log, err := OpenAttemptLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := MigrateFailed(BenchmarkDes, dir, models, log); err != nil {
			t.Fatal(err)
		}
	}
	if att, _ := ReadAttempts(dir); len(att) != 4 || att[3].CaseID != "b" || att[3].InputTokens != 40 {
		t.Errorf("after migrating twice: %+v; want b's failed/ once more in the ledger", att)
	}
	os.RemoveAll(filepath.Join(dir, suiterun.FailedDir, "b")) // b's rerun removes it: its line stays
	if n, in := total(dir); n != 4 || in != 62 {
		t.Errorf("after migrating and b's rerun: %d attempts, %d input tokens; want 4 and 62", n, in)
	}
}

// A last line that lacks only its newline is a whole attempt: read, and
// given its newline before the next append.
func TestAttemptLogTailWithoutNewline(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileAttempts), []byte(`{"attempt":"x","case_id":"c","outcome":"failed","calls":3}`), 0o644)
	if att, err := ReadAttempts(dir); err != nil || len(att) != 1 || att[0].Calls != 3 {
		t.Fatalf("%+v, %v", att, err)
	}
	appendAll(t, dir, Attempt{ID: "y", CaseID: "c", Outcome: AttemptFailed, Usage: Usage{Calls: 1}})
	if att, err := ReadAttempts(dir); err != nil || len(att) != 2 {
		t.Fatalf("after an append: %+v, %v", att, err)
	}
}

// The money spent (a Budget's start) counts the discarded attempts.
func TestSpentCountsDiscardedAttempts(t *testing.T) {
	c := &Costs{Models: []string{"m"}, prices: map[string]Price{"m": {Input: 1e6, Output: 0}},
		Cases:     []CaseCost{{ID: "a", Model: "m", Usage: Usage{InputTokens: 2}}},
		Discarded: []CaseCost{{ID: "b", Model: "m", Usage: Usage{InputTokens: 3}}, {ID: "b", Model: "m", Usage: Usage{InputTokens: 4}}}}
	if c.Spent() != 9 {
		t.Errorf("spent %v, want 9 (2 finished + 7 discarded)", c.Spent())
	}
	if n, u, v := c.DiscardedTotal(""); n != 2 || u.InputTokens != 7 || v != 7 {
		t.Errorf("discarded total %d, %+v, %v", n, u, v)
	}
}

// A ledger larger than maxAttemptsFile is refused before it is read (a
// sparse file: nothing is written).
func TestAttemptsFileBounded(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, FileAttempts))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxAttemptsFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadAttempts(dir); err == nil || !strings.Contains(err.Error(), FileAttempts) {
		t.Errorf("a ledger over the bound: %v", err)
	}
}

// A failed run's logs that end in a line cut short (a write that failed
// on a full disk) count up to the last whole line: a later run opens the
// directory, records the attempt in the ledger and resumes, instead of
// refusing to start until failed/ is deleted by hand.
func TestFailedRunTornLineCounted(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, suiterun.FailedDir, "a")
	os.MkdirAll(d, 0o755)
	whole := `{"step":0,"agent_id":"plant","prompt_tokens":40,"completion_tokens":4,"calls":1}` + "\n"
	os.WriteFile(filepath.Join(d, harness.FileDecisions), []byte(whole+`{"step":1,"agent_id":"plant","prompt_tok`), 0o644)
	models := map[string]string{"a": "m1"}
	got, err := Discarded(BenchmarkDes, []string{dir}, models)
	if err != nil || len(got) != 1 || got[0].Usage.InputTokens != 40 || got[0].Usage.Calls != 1 {
		t.Fatalf("Discarded: %+v, %v; want one attempt of 40 input tokens", got, err)
	}
	log, err := OpenAttemptLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := MigrateFailed(BenchmarkDes, dir, models, log); err != nil {
		t.Fatalf("a failed run cut short on a full disk stops the next run: %v", err)
	}
	if att, err := ReadAttempts(dir); err != nil || len(att) != 1 || att[0].InputTokens != 40 || att[0].OutputTokens != 4 {
		t.Fatalf("ledger %+v, %v; want the failed run's 40 and 4 tokens", att, err)
	}
}
