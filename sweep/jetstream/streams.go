package jetstream

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// resultsAge bounds how long unread results stay in the results stream.
const resultsAge = 7 * 24 * time.Hour

// setup creates (or updates) the streams, consumers and buckets of the
// experiment s: the work queue and the workers' shared consumer, the
// results and dead-letter streams with the coordinator's consumers, and
// the object store and its claims bucket when cases are stored there.
func setup(ctx context.Context, js jetstream.JetStream, s *Spec) (*streams, error) {
	n, err := namesOf(s.ID)
	if err != nil {
		return nil, err
	}
	st := &streams{n: n}
	if st.cases, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.caseStream(), Subjects: []string{n.caseSubject()}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute, MaxMsgSize: maxSmallMsg,
	}); err != nil {
		return nil, fmt.Errorf("stream %s: %w", n.caseStream(), err)
	}
	if _, err = js.CreateOrUpdateConsumer(ctx, n.caseStream(), jetstream.ConsumerConfig{
		Durable: ConsumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.AckWait, MaxDeliver: s.MaxDeliver,
		MaxAckPending: 10_000, DeliverPolicy: jetstream.DeliverAllPolicy,
	}); err != nil {
		return nil, fmt.Errorf("consumer %s: %w", ConsumerName, err)
	}
	if _, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.resultStream(), Subjects: []string{n.resultSubject()}, Storage: jetstream.FileStorage,
		MaxAge: resultsAge, MaxMsgSize: maxSmallMsg,
	}); err != nil {
		return nil, fmt.Errorf("stream %s: %w", n.resultStream(), err)
	}
	if st.results, err = js.CreateOrUpdateConsumer(ctx, n.resultStream(), jetstream.ConsumerConfig{
		Durable: "serve", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	}); err != nil {
		return nil, fmt.Errorf("consumer of %s: %w", n.resultStream(), err)
	}
	if _, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: n.deadStream(), Subjects: []string{n.deadSubject()}, Storage: jetstream.FileStorage,
		MaxMsgSize: maxSmallMsg,
	}); err != nil {
		return nil, fmt.Errorf("stream %s: %w", n.deadStream(), err)
	}
	if st.dead, err = js.CreateOrUpdateConsumer(ctx, n.deadStream(), jetstream.ConsumerConfig{
		Durable: "serve", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	}); err != nil {
		return nil, fmt.Errorf("consumer of %s: %w", n.deadStream(), err)
	}
	if s.Store == StoreObject {
		if st.obj, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: n.objectBucket(), Storage: jetstream.FileStorage,
		}); err != nil {
			return nil, fmt.Errorf("object store %s: %w", n.objectBucket(), err)
		}
		if st.claims, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: n.claimBucket(), Storage: jetstream.FileStorage, History: 1, MaxValueSize: maxClaimSize,
		}); err != nil {
			return nil, fmt.Errorf("key-value bucket %s: %w", n.claimBucket(), err)
		}
	}
	return st, nil
}

// streams are the experiment's JetStream handles the coordinator uses.
type streams struct {
	n       names
	cases   jetstream.Stream
	results jetstream.Consumer
	dead    jetstream.Consumer
	obj     jetstream.ObjectStore
	claims  jetstream.KeyValue
}
