package jetstream

import (
	"context"
	"fmt"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// The permit key is a contract between the coordinator and the workers:
// the coordinator holds a limit per key (ExperimentLimits) and a worker's
// model client asks under a key (EntryLimiter). A key the coordinator
// does not hold is answered "no global limit", so the two sides must
// build it the same way; both do through PermitKey.

// PermitKey names the global limit of one model entry (its label,
// sweep.Model.Label) at one endpoint (its base URL, normalised as the
// model client normalises it). Limits belong to an entry of the
// experiment's models list, as on one machine, where each entry has its
// own limits even when two entries share a base URL.
func PermitKey(entry, endpoint string) string { return entry + " " + endpoint }

// EntryLimiter is l asking for permits under the model entry's key
// (PermitKey of entry and the endpoint the model client asks for): the
// limiter a worker gives the client of one model entry. Nil when l is
// nil.
func EntryLimiter(l llm.Limiter, entry string) llm.Limiter {
	if l == nil {
		return nil
	}
	return entryLimiter{l: l, entry: entry}
}

type entryLimiter struct {
	l     llm.Limiter
	entry string
}

func (k entryLimiter) Acquire(ctx context.Context, endpoint string) (func(), error) {
	return k.l.Acquire(ctx, PermitKey(k.entry, endpoint))
}

// ExperimentLimits are the experiment's model limits, which the
// coordinator makes global: per entry of its models list (or its llm
// section), limits.concurrency (default llm.DefaultConcurrency) and
// limits.rpm, keyed as the workers' clients ask for them (PermitKey).
// None when the experiment calls no model.
func ExperimentLimits(e *sweep.Experiment) ([]EndpointLimit, error) {
	if !e.WithLLM() {
		return nil, nil
	}
	var out []EndpointLimit
	for _, m := range e.ModelList() {
		endpoint, err := normalEndpoint(m.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("experiment model %s: %w", m.Label(), err)
		}
		conc := m.Limits.Concurrency
		if conc == 0 {
			conc = llm.DefaultConcurrency
		}
		out = append(out, EndpointLimit{Endpoint: PermitKey(m.Label(), endpoint), Concurrency: conc, RPM: m.Limits.RPM})
	}
	return out, nil
}

// normalEndpoint is a base URL as the model client normalises it (no key
// is read).
func normalEndpoint(base string) (string, error) { return llm.NormalizeBaseURL(base) }
