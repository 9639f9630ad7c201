package llm_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

// countingLimiter grants every permit and counts them.
type countingLimiter struct {
	mu                 sync.Mutex
	acquired, released int
	endpoint           string
	fail               error
}

func (l *countingLimiter) Acquire(_ context.Context, endpoint string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, l.fail
	}
	l.acquired++
	l.endpoint = endpoint
	return func() {
		l.mu.Lock()
		l.released++
		l.mu.Unlock()
	}, nil
}

// A Config.Limiter is asked once per attempt (retries included), with the
// normalised base URL, and every permit is released.
func TestLimiterPerAttempt(t *testing.T) {
	srv := stubmodel.NewServer(stubmodel.Sequence(stubmodel.Status(500, "boom"), stubmodel.Text("ok")))
	defer srv.Close()
	lim := &countingLimiter{}
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/", Model: "m", Limiter: lim, RetryBaseDelay: 1, RetryMaxDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if lim.acquired != 2 || lim.released != 2 || lim.endpoint != srv.URL {
		t.Errorf("acquired %d, released %d, endpoint %q; want 2, 2, %q", lim.acquired, lim.released, lim.endpoint, srv.URL)
	}
}

// A limiter that cannot grant fails the attempt like a transient server
// failure, and no request is sent.
func TestLimiterFailure(t *testing.T) {
	srv := stubmodel.NewServer(stubmodel.Echo)
	defer srv.Close()
	lim := &countingLimiter{fail: errors.New("coordinator gone")}
	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "m", Limiter: lim, MaxAttempts: 2, RetryBaseDelay: 1, RetryMaxDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "hi"}}); err == nil {
		t.Fatal("want an error")
	}
	if srv.Count() != 0 {
		t.Errorf("%d requests sent without a permit", srv.Count())
	}
}
