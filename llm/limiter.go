package llm

import (
	"context"
	"fmt"
)

// Limiter hands out permits for requests to an endpoint, beyond the
// limits one process enforces itself (Config.Concurrency, Config.RPM):
// for limits that many processes share, such as a distributed sweep's,
// whose coordinator holds them. Acquire blocks until a request to the
// endpoint (its normalised base URL) may start, or ctx ends; release is
// called once when the attempt is over. Implementations must be safe for
// concurrent use.
type Limiter interface {
	Acquire(ctx context.Context, endpoint string) (release func(), err error)
}

// permit asks the Config's Limiter for a permit for one attempt. A
// failure to get one is retried like a transient server failure, unless
// the caller gave up.
func (c *Client) permit(ctx context.Context) (func(), *failure) {
	release, err := c.cfg.Limiter.Acquire(ctx, c.ep.baseURL)
	if err == nil {
		return release, nil
	}
	if ctx.Err() != nil {
		return nil, &failure{reason: fmt.Sprintf("waiting for a shared permit: %v", ctx.Err()), err: context.Cause(ctx), class: ClassCanceled}
	}
	return nil, &failure{reason: fmt.Sprintf("shared limiter: %v", err), retryable: true}
}
