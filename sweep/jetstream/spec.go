package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/coordbench/coordbench/sweep"
)

// Stores of case artifacts.
const (
	StoreFS     = "fs"     // workers write case directories into a shared directory
	StoreObject = "object" // workers upload each case as one object; serve downloads it
)

// Spec is what workers need to run an experiment, published by the
// coordinator in the key-value bucket: the experiment file's bytes (so
// workers need no copy) and how to run and store cases. It holds no
// secret: workers read API keys from their own environment, by the
// variable name in the experiment.
type Spec struct {
	ID        string `json:"id"`
	Benchmark string `json:"benchmark"`
	// FileName is the experiment file's base name (for errors); File its
	// contents.
	FileName string `json:"file_name"`
	File     []byte `json:"file"`
	// Store is StoreFS or StoreObject.
	Store string `json:"store"`
	// ObjectClaims is set with StoreObject (and only then): each stored
	// case is an object of a name of its own, claimed once in the claims
	// bucket (see store.put). Serve sets it. A worker of a version that
	// stored objects under the bare case id (and raced) refuses the spec
	// for this unknown field, and a worker of this version refuses a spec
	// of StoreObject without it, served by such a version.
	ObjectClaims bool `json:"object_claims,omitempty"`
	// AckWait is how long a delivered case may go without a heartbeat
	// before it is redelivered; workers heartbeat every AckWait/3.
	AckWait time.Duration `json:"ack_wait"`
	// MaxDeliver bounds deliveries of one case.
	MaxDeliver int `json:"max_deliver"`
	// MaxCaseBytes bounds one case's stored artifacts.
	MaxCaseBytes int64 `json:"max_case_bytes"`
	// Cases is the number of cases of the experiment.
	Cases int `json:"cases"`
	// Limits are the endpoint limits the coordinator hands permits for.
	Limits []EndpointLimit `json:"limits,omitempty"`
	// Inputs are what serve resolved the experiment from beyond its file
	// (instance and paradigm contents, the tool's version): a worker that
	// resolves other ones fails the case, saying what differs.
	Inputs *sweep.Inputs `json:"inputs,omitempty"`
}

// EndpointLimit is the global limit of one model endpoint.
type EndpointLimit struct {
	Endpoint    string  `json:"endpoint"` // normalised base URL
	Concurrency int     `json:"concurrency"`
	RPM         float64 `json:"rpm,omitempty"`
}

func (s *Spec) check() error {
	if _, err := namesOf(s.ID); err != nil {
		return err
	}
	switch {
	case s.Store != StoreFS && s.Store != StoreObject:
		return fmt.Errorf("store %q: want fs or object", s.Store)
	case s.ObjectClaims != (s.Store == StoreObject):
		if s.Store == StoreObject {
			return errors.New("store object without claims: served by an older coordbench, which stored cases in a way two deliveries could both think they stored: run serve and workers of the same version")
		}
		return fmt.Errorf("object claims with store %q", s.Store)
	case s.AckWait < time.Second:
		return fmt.Errorf("ack wait %s: want at least 1s", s.AckWait)
	case s.MaxDeliver < 1:
		return fmt.Errorf("max deliver %d: want at least 1", s.MaxDeliver)
	case s.MaxCaseBytes < 1:
		return fmt.Errorf("max case bytes %d: want at least 1", s.MaxCaseBytes)
	}
	for _, l := range s.Limits {
		if l.Concurrency < 1 || l.RPM < 0 {
			return fmt.Errorf("endpoint %s: concurrency %d, rpm %g: want concurrency at least 1 and rpm from 0", l.Endpoint, l.Concurrency, l.RPM)
		}
	}
	return nil
}

// encodeSpec is s as the key-value value.
func encodeSpec(s *Spec) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSpecSize {
		return nil, fmt.Errorf("the experiment is %d bytes as published, more than %d", len(b), MaxSpecSize)
	}
	return b, nil
}

// decodeSpec reads and checks a Spec.
func decodeSpec(b []byte) (*Spec, error) {
	if len(b) > MaxSpecSize {
		return nil, fmt.Errorf("experiment spec of %d bytes: more than %d", len(b), MaxSpecSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("experiment spec: %v (published by another version of coordbench?)", err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("experiment spec: %w", err)
	}
	return &s, nil
}

// sweepsBucket opens (creating if needed) the bucket of experiments.
func sweepsBucket(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, MaxValueSize: MaxSpecSize, History: 1})
	}
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", Bucket, err)
	}
	return kv, nil
}

// currentSpec reads the experiment being served; ok is false while none is.
func currentSpec(ctx context.Context, kv jetstream.KeyValue) (*Spec, bool, error) {
	cur, err := kv.Get(ctx, "current")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	n, err := namesOf(string(cur.Value()))
	if err != nil {
		return nil, false, err
	}
	e, err := kv.Get(ctx, n.specKey())
	if err != nil {
		return nil, false, fmt.Errorf("experiment %s: %w", n.short(), err)
	}
	s, err := decodeSpec(e.Value())
	if err != nil {
		return nil, false, err
	}
	if s.ID != n.id {
		return nil, false, fmt.Errorf("experiment spec under %s has id %s", n.short(), s.ID)
	}
	return s, true, nil
}
