package jetstream

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/suiterun"
	"github.com/coordbench/coordbench/sweep"
)

// TestServeRecordsLateResults: a duplicate run that a worker reports after
// the serve that published its case had stopped (every case had an
// outcome) waits in the results stream; serving the finished experiment
// again reads it and records the run's usage in the ledger.
func TestServeRecordsLateResults(t *testing.T) {
	spec, url, open := testObjectStore(t)
	if !putRun(t, open(), "c-1", "A") {
		t.Fatal("the run was not stored")
	}
	late := Result{Case: "c-1", Worker: "w2", Status: StatusDone, Attempt: &sweep.Attempt{ID: "late-run", CaseID: "c-1",
		Outcome: sweep.AttemptDuplicate, Usage: sweep.Usage{Calls: 2, InputTokens: 100, OutputTokens: 7}}}
	out, dir := serveFinished(t, spec, url, []string{"c-1"}, late)
	if out.Done != 1 || out.Kept != 1 {
		t.Errorf("outcome %+v: want the case done, kept from before", out)
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != 1 || att[0].ID != "late-run" || att[0].Calls != 2 || att[0].Outcome != sweep.AttemptDuplicate {
		t.Errorf("ledger %+v, %v: want the late duplicate run", att, err)
	}
}

// serveFinished serves the experiment of spec (cases ids, model-backed)
// over url into a new directory, after publishing the results res as
// workers would have: it returns the outcome and the directory.
func serveFinished(t *testing.T, spec *Spec, url string, ids []string, res ...Result) (*Outcome, string) {
	t.Helper()
	conn, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := namesOf(spec.ID)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, r := range res {
		if _, err := js.Publish(ctx, n.resultSubject(), encode(r)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	s := *spec
	s.ObjectClaims = false // serve sets it
	models := map[string]bool{}
	for _, id := range ids {
		models[id] = true
	}
	out, err := Serve(ctx, conn, ServeOptions{Spec: &s, IDs: ids, Dir: dir, Log: io.Discard, ModelCases: models})
	if err != nil {
		t.Fatal(err)
	}
	return out, dir
}

// TestServeFailsABadClaimsCase: a case whose claim names no object of
// its own (a peer's forgery, an object lost) fails that case, with
// error.txt naming the claim; the other cases, and the serve, go on.
func TestServeFailsABadClaimsCase(t *testing.T) {
	spec, url, open := testObjectStore(t)
	st := open()
	if !putRun(t, st, "good-1", "G") {
		t.Fatal("the run was not stored")
	}
	if _, err := st.claims.Create(context.Background(), claimKey("bad-1"), []byte("elsewhere.X")); err != nil {
		t.Fatal(err)
	}
	out, dir := serveFinished(t, spec, url, []string{"good-1", "bad-1"})
	if out.Done != 1 || len(out.Failed) != 1 || !strings.Contains(out.Failed["bad-1"], "not a run of case bad-1") {
		t.Errorf("outcome %+v: want good-1 done and bad-1 failed on its claim", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, suiterun.FailedDir, "bad-1", suiterun.ErrorFile)); err != nil || !strings.Contains(string(b), "claim") {
		t.Errorf("bad-1's error.txt: %q, %v", b, err)
	}
}

// TestServeKeptRunNotDiscarded: a worker that could not tell whether its
// claim was written hands the case back naming its object; if the claim
// names that object the run is the kept one and its usage is not also
// recorded as discarded. A run handed back naming another object is.
func TestServeKeptRunNotDiscarded(t *testing.T) {
	spec, url, open := testObjectStore(t)
	st := open()
	if !putRun(t, st, "c-1", "A") {
		t.Fatal("the run was not stored")
	}
	kept := objectNames(t, st)[0]
	att := func(id string) *sweep.Attempt {
		return &sweep.Attempt{ID: id, CaseID: "c-1", Outcome: sweep.AttemptReturned, Usage: sweep.Usage{Calls: 3, InputTokens: 30}}
	}
	_, dir := serveFinished(t, spec, url, []string{"c-1"},
		Result{Case: "c-1", Worker: "w1", Status: StatusReturned, Object: kept, Attempt: att("kept-run")},
		Result{Case: "c-1", Worker: "w2", Status: StatusReturned, Object: "c-1.Other0123", Attempt: att("lost-run")},
		Result{Case: "c-1", Worker: "w3", Status: StatusReturned, Attempt: att("plain-return")})
	got, err := sweep.ReadAttempts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, " ") != "lost-run plain-return" {
		t.Errorf("ledger %v: want the lost run and the plain return, not the kept run", ids)
	}
}

// TestClaimUnknownNamesObject: a claim that cannot be written nor read
// (here its bucket is gone) leaves the run's object in place and says
// which, for the worker to name in the case it hands back.
func TestClaimUnknownNamesObject(t *testing.T) {
	spec, url, open := testObjectStore(t)
	st := open()
	tarPath := runTar(t, "c-1", "A")
	conn, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, _ := jetstream.New(conn)
	n, _ := namesOf(spec.ID)
	if err := js.DeleteKeyValue(context.Background(), n.claimBucket()); err != nil {
		t.Fatal(err)
	}
	stored, err := st.putObject(context.Background(), "c-1", tarPath)
	var cu *claimUnknownError
	if stored || !errors.As(err, &cu) || checkObjectName("c-1", cu.object) != nil {
		t.Fatalf("putObject without a claims bucket: %v, %v", stored, err)
	}
	if names := objectNames(t, st); len(names) != 1 || names[0] != cu.object {
		t.Errorf("objects %v: want the run's %s kept", names, cu.object)
	}
}
