package main

import (
	"context"
	"errors"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
)

// workerModels builds the model-backed controllers or agents of e for one
// case on a distributed sweep's worker, with sweep run's code
// (sweep.BuildModels), with two differences: responses go to the case's own
// cache file (cache, read-write, so that it travels with the case and
// serve merges it), and every model attempt first asks limiter (the
// coordinator's global limits; nil: none). The closer releases the cache.
func workerModels(e *sweep.Experiment, cache string, limiter llm.Limiter) (sweep.Models, func(), error) {
	if !e.WithLLM() {
		return sweep.Models{}, func() {}, nil
	}
	o := sweep.ModelOptions{OverrideCache: true, Cache: cache, CacheMode: llm.CacheReadWrite,
		Limiter: func(entry string) llm.Limiter { return entryLimiter(limiter, entry) }}
	if e.LLM != nil {
		switch e.LLM.CacheMode {
		case llm.CacheReplay:
			return sweep.Models{}, nil, errors.New("experiment llm.cache_mode replay: replay on one machine with sweep run (workers record responses; serve merges them into DIR/llm_cache.db)")
		case llm.CacheOff:
			o.Cache, o.CacheMode = "", llm.CacheOff
		}
	}
	set, closer, err := sweep.BuildModels(e, o)
	if err != nil {
		return sweep.Models{}, nil, err
	}
	return set.Models, closer, nil
}

// entryLimiter asks l for permits under the model entry's own key
// (permitKey): limits belong to an entry of the experiment's models list,
// as on one machine, where each entry has its own limits even when two
// entries share a base URL. nil when l is nil.
func entryLimiter(l llm.Limiter, entry string) llm.Limiter {
	if l == nil {
		return nil
	}
	return keyedLimiter{l: l, entry: entry}
}

type keyedLimiter struct {
	l     llm.Limiter
	entry string
}

func (k keyedLimiter) Acquire(ctx context.Context, endpoint string) (func(), error) {
	return k.l.Acquire(ctx, permitKey(k.entry, endpoint))
}

// permitKey names the global limit of one model entry at one endpoint
// (its normalised base URL).
func permitKey(entry, endpoint string) string { return entry + " " + endpoint }
