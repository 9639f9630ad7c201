package main

import (
	"errors"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
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
		Limiter: func(entry string) llm.Limiter { return jetstream.EntryLimiter(limiter, entry) }, Stubs: stubPolicies()}
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
