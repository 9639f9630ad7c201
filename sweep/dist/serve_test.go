package dist

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	late := Result{Case: "c-1", Worker: "w2", Status: StatusDone, Attempt: &sweep.Attempt{ID: "late-run", CaseID: "c-1",
		Outcome: sweep.AttemptDuplicate, Usage: sweep.Usage{Calls: 2, InputTokens: 100, OutputTokens: 7}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.Publish(ctx, n.resultSubject(), encode(late)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := *spec
	s.ObjectClaims = false // serve sets it
	out, err := Serve(ctx, conn, ServeOptions{Spec: &s, IDs: []string{"c-1"}, Dir: dir, Log: io.Discard,
		ModelCases: map[string]bool{"c-1": true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 1 || out.Kept != 1 {
		t.Errorf("outcome %+v: want the case done, kept from before", out)
	}
	att, err := sweep.ReadAttempts(dir)
	if err != nil || len(att) != 1 || att[0].ID != "late-run" || att[0].Calls != 2 || att[0].Outcome != sweep.AttemptDuplicate {
		t.Errorf("ledger %+v, %v: want the late duplicate run", att, err)
	}
}
