package jetstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/sweep"
)

// The object store's tests run a real embedded nats-server with
// JetStream, as serve and the workers use it.

const storeTestID = "fedcba9876543210fedcba9876543210"

// testObjectStore starts an embedded NATS server with an experiment's
// streams and buckets set up as serve sets them up (object store), and
// returns the experiment, the server's URL and a function that opens
// its store on a connection of its own, as each worker and serve do.
func testObjectStore(t *testing.T) (*Spec, string, func() *store) {
	t.Helper()
	emb, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	js := func() jetstream.JetStream {
		nc, err := nats.Connect(emb.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	spec := &Spec{ID: storeTestID, Benchmark: sweep.BenchmarkDes, Store: StoreObject, ObjectClaims: true,
		AckWait: 2 * time.Second, MaxDeliver: 3, MaxCaseBytes: 1 << 20}
	if _, err := setup(context.Background(), js(), spec); err != nil {
		t.Fatal(err)
	}
	n, _ := namesOf(spec.ID)
	return spec, emb.URL(), func() *store {
		js := js()
		obj, err := js.ObjectStore(context.Background(), n.objectBucket())
		if err != nil {
			t.Fatal(err)
		}
		claims, err := js.KeyValue(context.Background(), n.claimBucket())
		if err != nil {
			t.Fatal(err)
		}
		return &store{spec: spec, casesDir: sweep.CasesDir(spec.Benchmark), obj: obj, claims: claims}
	}
}

// finishedRun writes the finished case directory and response cache of
// a run by who (its files say who ran it) and returns their paths and a
// scratch directory for the run's tar.
func finishedRun(t *testing.T, id, who string) (caseDir, cache, scratch string) {
	t.Helper()
	tmp := t.TempDir()
	caseDir = filepath.Join(tmp, "suite", id)
	if err := os.MkdirAll(caseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cache = filepath.Join(tmp, tarCache)
	if err := os.WriteFile(filepath.Join(caseDir, "who.txt"), []byte(who), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache, []byte("replies of "+who), 0o644); err != nil {
		t.Fatal(err)
	}
	return caseDir, cache, tmp
}

// runTar is the tar a worker uploads of a run of case id by who.
func runTar(t *testing.T, id, who string) string {
	t.Helper()
	caseDir, cache, scratch := finishedRun(t, id, who)
	tarPath := filepath.Join(scratch, "case.tar")
	if err := writeTar(tarPath, caseDir, cache, true, 1<<20); err != nil {
		t.Fatal(err)
	}
	return tarPath
}

// fetched downloads case id with st into a new experiment directory and
// returns who ran the case it got and whose response cache came with it.
func fetched(t *testing.T, st *store, id string) (caseBy, cacheBy string) {
	t.Helper()
	dir := t.TempDir()
	if err := st.fetch(context.Background(), dir, id); err != nil {
		t.Fatalf("fetch %s: %v", id, err)
	}
	who, err := os.ReadFile(filepath.Join(dir, st.casesDir, id, "who.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.ReadFile(filepath.Join(dir, CachesDir, id+".db"))
	if err != nil {
		t.Fatal(err)
	}
	return string(who), strings.TrimPrefix(string(cache), "replies of ")
}

// objectNames lists the names of the objects in st's object store.
func objectNames(t *testing.T, st *store) []string {
	t.Helper()
	objs, err := st.obj.List(context.Background())
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	return names
}

// TestObjectStoreRace: two deliveries of one case (a redelivery after a
// missed heartbeat, say) finish at once and store it, each worker on a
// connection of its own: exactly one reports it stored, the other not
// (its worker then records a duplicate run, with its usage), and serve
// fetches the kept run's case directory and that run's response cache.
// The loser's object is gone: one object is left per case.
func TestObjectStoreRace(t *testing.T) {
	_, _, open := testObjectStore(t)
	deliveries := []*store{open(), open()}
	serve := open()
	who := []string{"A", "B"}
	const rounds = 20
	for i := range rounds {
		id := fmt.Sprintf("case-%d", i)
		var stored [2]bool
		var errs [2]error
		start := make(chan struct{})
		var wg sync.WaitGroup
		for k, st := range deliveries {
			caseDir, cache, scratch := finishedRun(t, id, who[k])
			wg.Go(func() {
				<-start
				stored[k], errs[k] = st.put(context.Background(), id, caseDir, cache, scratch)
			})
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: put: %v, %v", i, errs[0], errs[1])
		}
		if stored[0] == stored[1] {
			t.Fatalf("round %d: deliveries A and B of %s report stored = %v and %v; want exactly one stored", i, id, stored[0], stored[1])
		}
		winner := who[0]
		if stored[1] {
			winner = who[1]
		}
		if caseBy, cacheBy := fetched(t, serve, id); caseBy != winner || cacheBy != winner {
			t.Fatalf("round %d: %s was stored by %s, but serve fetched the case of %s with the response cache of %s", i, id, winner, caseBy, cacheBy)
		}
		for k, st := range deliveries {
			if has, err := st.has(context.Background(), id); err != nil || !has {
				t.Fatalf("round %d: delivery %s: has(%s) = %v, %v after it was stored", i, who[k], id, has, err)
			}
		}
	}
	if names := objectNames(t, serve); len(names) != rounds {
		t.Errorf("%d objects for %d cases, want one each (the losing runs' deleted): %v", len(names), rounds, names)
	}
}

// TestObjectStoreClaimLost: a run whose upload finished after the case
// was claimed by another (both past the has check, the case of the race
// made certain) is not stored, its object is deleted, and the claim
// still names the first run's object. Claiming again for the object
// already claimed (a retry after an error that hid that the claim was
// written) reports it stored.
func TestObjectStoreClaimLost(t *testing.T) {
	_, _, open := testObjectStore(t)
	a, b := open(), open()
	ctx := context.Background()
	const id = "s+1,x@y.z_" // characters a key may not hold as they are
	var first string        // the first run's object
	for k, st := range []*store{a, b} {
		tarPath := runTar(t, id, []string{"A", "B"}[k])
		stored, err := st.putObject(ctx, id, tarPath)
		if err != nil || stored != (k == 0) {
			t.Fatalf("run %d: stored = %v, %v; want only the first stored", k, stored, err)
		}
		if k == 0 {
			first = objectNames(t, a)[0]
		}
	}
	if got := objectNames(t, a); len(got) != 1 || got[0] != first {
		t.Errorf("objects %v: want the first run's alone", got)
	}
	if caseBy, cacheBy := fetched(t, b, id); caseBy != "A" || cacheBy != "A" {
		t.Errorf("fetched the case of %s, the cache of %s; want A's", caseBy, cacheBy)
	}
	if stored, err := a.claim(ctx, id, first); err != nil || !stored {
		t.Errorf("claiming again for the claimed object: %v, %v; want stored", stored, err)
	}
}

// TestObjectStoreClaimChecked: a claim comes from whoever can publish on
// the NATS server: one naming another case's object, or an object of
// another case's metadata, makes the case claimed (no second claim can
// be written) but is not fetched as the case.
func TestObjectStoreClaimChecked(t *testing.T) {
	_, _, open := testObjectStore(t)
	st := open()
	ctx := context.Background()
	tarPath := runTar(t, "y", "Y")
	if stored, err := st.putObject(ctx, "y", tarPath); err != nil || !stored {
		t.Fatal(stored, err)
	}
	yObj := objectNames(t, st)[0]
	if _, err := st.claims.Create(ctx, claimKey("z"), []byte(yObj)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(tarPath)
	defer f.Close()
	if _, err := st.obj.Put(ctx, jetstream.ObjectMeta{Name: "w.forged", Metadata: map[string]string{metaCase: "y"}}, f); err != nil {
		t.Fatal(err)
	}
	if _, err := st.claims.Create(ctx, claimKey("w"), []byte("w.forged")); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"z": "not a run of case z", "w": `holds case "y"`} {
		if has, err := st.has(ctx, id); err != nil || !has {
			t.Errorf("%s: has = %v, %v; want claimed", id, has, err)
		}
		if err := st.fetch(ctx, t.TempDir(), id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: fetch: %v; want %q", id, err, want)
		}
	}
	// y's object, named y.<run>, is no earlier version's object of a
	// case of that id.
	if has, err := st.has(ctx, yObj); err != nil || has {
		t.Errorf("has(%s) = %v, %v: another case's object read as an earlier version's", yObj, has, err)
	}
}

// putLegacy stores a case as coordbench stored it before claims: one
// object named by the case id.
func putLegacy(t *testing.T, st *store, id, who string) {
	t.Helper()
	tarPath := runTar(t, id, who)
	b, err := os.ReadFile(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.obj.Put(context.Background(), jetstream.ObjectMeta{Name: id}, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}

// TestObjectStoreLegacy: an object store written by an earlier version
// (a case is an object named by its id, without a claim) is still read:
// the case counts as stored, a new delivery keeps it (no claim, no
// second object), and it is fetched.
func TestObjectStoreLegacy(t *testing.T) {
	_, _, open := testObjectStore(t)
	st := open()
	ctx := context.Background()
	putLegacy(t, st, "old", "L")
	if has, err := st.has(ctx, "old"); err != nil || !has {
		t.Fatalf("has = %v, %v; want the earlier version's object counted", has, err)
	}
	caseDir, cache, scratch := finishedRun(t, "old", "N")
	if stored, err := st.put(ctx, "old", caseDir, cache, scratch); err != nil || stored {
		t.Errorf("a new delivery: stored = %v, %v; want the stored case kept", stored, err)
	}
	if _, err := st.claims.Get(ctx, claimKey("old")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("claim of the earlier version's case: %v; want none", err)
	}
	if names := objectNames(t, st); len(names) != 1 || names[0] != "old" {
		t.Errorf("objects %v: want the earlier version's alone", names)
	}
	if caseBy, cacheBy := fetched(t, st, "old"); caseBy != "L" || cacheBy != "L" {
		t.Errorf("fetched the case of %s, the cache of %s; want the earlier version's", caseBy, cacheBy)
	}
}

// putRun stores a run of case id by who as a worker does, past the has
// check: upload, then claim.
func putRun(t *testing.T, st *store, id, who string) bool {
	t.Helper()
	tarPath := runTar(t, id, who)
	stored, err := st.putObject(context.Background(), id, tarPath)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// putOrphan uploads a run of case id as a worker does but claims
// nothing: the worker was killed between the two.
func putOrphan(t *testing.T, st *store, id string) {
	t.Helper()
	name := id + ".Orphan0123456789"
	if _, err := st.obj.Put(context.Background(), jetstream.ObjectMeta{Name: name, Metadata: map[string]string{metaCase: id}}, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
}

// TestObjectStorePrune: the objects of runs a worker uploaded but never
// claimed (killed in between) are deleted once another run of their
// case is claimed; one of a case nobody claimed yet is kept (its worker
// may be about to claim it), as are the claimed runs and an earlier
// version's objects.
func TestObjectStorePrune(t *testing.T) {
	_, _, open := testObjectStore(t)
	st := open()
	putRun(t, st, "p1", "A")
	claimed := objectNames(t, st)[0]
	putOrphan(t, st, "p1")
	putOrphan(t, st, "p2")
	putLegacy(t, st, "p3", "L")
	n, err := st.prune(context.Background(), []string{"p1", "p2", "p3"})
	if err != nil || n != 1 {
		t.Errorf("prune: %d, %v; want 1 object deleted", n, err)
	}
	got := strings.Join(objectNames(t, st), " ")
	if want := claimed + " p2.Orphan0123456789 p3"; got != want {
		t.Errorf("objects left: %s; want %s", got, want)
	}
}

// The claim keys of case ids are valid keys and tell ids apart.
func TestClaimKey(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"a.b", "a_2Eb", "a_b", "s+1,x@y.z_", "A1C6J1-centralized-llm-s1", "x="} {
		k := claimKey(id)
		if prev, ok := seen[k]; ok {
			t.Errorf("%q and %q share key %q", prev, id, k)
		}
		seen[k] = id
		if strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-=_") != "" {
			t.Errorf("%q: key %q", id, k)
		}
	}
}

// A worker refuses an object-store experiment served without claims (by
// an earlier version, whose workers raced to store a case).
func TestSpecWithoutClaimsRefused(t *testing.T) {
	s := &Spec{ID: storeTestID, Benchmark: sweep.BenchmarkDes, Store: StoreObject, AckWait: time.Second, MaxDeliver: 1, MaxCaseBytes: 1}
	b, err := encodeSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSpec(b); err == nil || !strings.Contains(err.Error(), "older coordbench") {
		t.Errorf("decodeSpec: %v; want refused as an older version's", err)
	}
	s.ObjectClaims = true
	if b, _ = encodeSpec(s); !bytes.Contains(b, []byte(`"object_claims":true`)) {
		t.Errorf("spec %s", b)
	}
	if _, err := decodeSpec(b); err != nil {
		t.Error(err)
	}
}

// TestServeResumesLegacyObjects: serve resuming an experiment whose
// cases an earlier version stored in the object store downloads them as
// finished, as it does a claimed case, and publishes nothing; at the end
// it deletes the object a killed worker left of a claimed case.
func TestServeResumesLegacyObjects(t *testing.T) {
	spec, url, open := testObjectStore(t)
	st := open()
	putLegacy(t, st, "old-1", "L")
	putRun(t, st, "new-1", "N")
	claimed := objectNames(t, st)[1]
	putOrphan(t, st, "new-1")
	conn, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	s := *spec
	s.ObjectClaims = false // serve sets it
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := Serve(ctx, conn, ServeOptions{Spec: &s, IDs: []string{"old-1", "new-1"}, Dir: dir, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 2 || out.Kept != 2 {
		t.Errorf("outcome %+v: want both cases done, kept from before", out)
	}
	for id, who := range map[string]string{"old-1": "L", "new-1": "N"} {
		if b, err := os.ReadFile(filepath.Join(dir, sweep.CasesDir(spec.Benchmark), id, "who.txt")); err != nil || string(b) != who {
			t.Errorf("downloaded case %s: %q, %v", id, b, err)
		}
	}
	if got, want := strings.Join(objectNames(t, st), " "), "old-1 "+claimed; got != want {
		t.Errorf("objects after serve: %s; want %s", got, want)
	}
}
