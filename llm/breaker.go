package llm

import (
	"fmt"
	"sync"
	"time"
)

// breaker is an endpoint's circuit breaker. A hanging or unreachable
// endpoint would otherwise cost every call MaxAttempts × Timeout (10
// minutes with the defaults) before the caller learns of the outage.
// After `threshold` attempts in a row, across all calls of the endpoint,
// fail without any response from the server (timeouts, connection
// failures) or with 5xx, the breaker opens: attempts fail at once, not
// retried, with the class and status of the last failure that counted,
// until `cooldown` has passed. Then attempts go through again
// (half open): a success closes the breaker, a failure opens it anew.
// Answers the server did give (4xx, 429, unusable bodies) do not count:
// the endpoint is up.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int       // consecutive counted failures
	openUntil time.Time // zero: closed
	last      failure   // the last counted failure
}

// DefaultBreakerCooldown is Config.BreakerCooldown's default (the
// threshold's is Config.MaxAttempts).
const DefaultBreakerCooldown = 30 * time.Second

// counts reports whether a failed attempt of this kind says the endpoint
// is down.
func (f *failure) counts() bool {
	return f.err == nil && (f.class == ClassTimeout || f.class == ClassTransport || f.status >= 500)
}

// check returns a failure if the breaker is open now, nil if the attempt
// may go.
func (b *breaker) check(now time.Time) *failure {
	if b.threshold <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() || !now.Before(b.openUntil) {
		return nil
	}
	return &failure{
		status: b.last.status,
		class:  b.last.class,
		reason: fmt.Sprintf("endpoint considered down: %d attempts in a row failed without a usable response (last: %s); "+
			"no request is sent for %s after the last failure (circuit breaker)", b.failures, b.last.reason, b.cooldown),
	}
}

// record notes an attempt's outcome (f nil: success).
func (b *breaker) record(f *failure, now time.Time) {
	if b.threshold <= 0 || f != nil && !f.counts() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if f == nil {
		b.failures, b.openUntil = 0, time.Time{}
		return
	}
	b.failures++
	b.last = failure{status: f.status, class: f.class, reason: f.reason}
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
	}
}
