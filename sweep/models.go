package sweep

import (
	"math"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/llm"
)

// MaxModels bounds the models list of an experiment file.
const MaxModels = 64

// Model is one entry of an experiment's models list: a model behind an
// OpenAI-compatible endpoint, with its limits and price (llm.Spec). Every
// case of a model-backed controller (des controller llm) or of LLM agents
// (silo agent kind llm) runs once per model. Limits and price change
// neither replies nor results: they are not part of the experiment's
// identity.
type Model = llm.Spec

// Endpoint, Limits and Price are the parts of a Model (llm.Endpoint,
// llm.Limits, llm.Price).
type (
	Endpoint = llm.Endpoint
	Limits   = llm.Limits
	Price    = llm.Price
)

// ModelList is the experiment's models: its models list, or the one
// model of its llm section (the older form), or none.
func (e *Experiment) ModelList() []Model {
	if len(e.Models) > 0 {
		return e.Models
	}
	l := e.LLM
	if l == nil || l.Model == "" {
		return nil
	}
	return []Model{{Endpoint: l.Endpoint, Limits: Limits{Concurrency: l.Concurrency, RPM: l.RPM}, Price: l.Price}}
}

// Frameworks are the LLM controller's frameworks a des experiment crosses
// its model-backed cases with: des.frameworks, or llm.framework, or the
// default ("").
func (e *Experiment) Frameworks() []string {
	if e.Des != nil && len(e.Des.Frameworks) > 0 {
		var out []string
		for _, item := range e.Des.Frameworks {
			for _, f := range strings.Split(item, ",") {
				if f = strings.TrimSpace(f); f != "" {
					out = append(out, f)
				}
			}
		}
		return out
	}
	if e.LLM != nil && e.LLM.Framework != "" {
		return []string{e.LLM.Framework}
	}
	return []string{""}
}

// setPrices sets the models' prices by label (from a marker).
func (e *Experiment) setPrices(p map[string]Price) {
	for i := range e.Models {
		e.Models[i].Price = p[e.Models[i].Label()]
	}
	if len(e.Models) == 0 && e.LLM != nil {
		e.LLM.Price = p[e.LLM.Label()]
	}
}

// checkModels checks the models list and how it shares the llm section.
func (e *Experiment) checkModels() error {
	if len(e.Models) > MaxModels {
		return fieldErr("models", "%d models: at most %d", len(e.Models), MaxModels)
	}
	if len(e.Models) > 0 && e.LLM != nil {
		l := e.LLM
		per := map[string]bool{"name": l.Name != "", "model": l.Model != "", "base_url": l.BaseURL != "", "api_key_env": l.APIKeyEnv != "",
			"temperature": l.Temperature != nil, "max_tokens": l.MaxTokens != 0, "seed": l.Seed != nil, "concurrency": l.Concurrency != 0,
			"rpm": l.RPM != 0, "price": l.Price != Price{}}
		for _, k := range sortedKeys(per) {
			if per[k] {
				return fieldErr("llm."+k, "with a models list, set %s per model in models (the llm section then holds the settings all models share)", k)
			}
		}
	}
	labels := map[string]int{}
	for i, m := range e.ModelList() {
		at := "models[" + strconv.Itoa(i) + "]"
		if len(e.Models) == 0 {
			at = "llm"
		}
		if m.Model == "" {
			return fieldErr(at+".model", "required")
		}
		if m.BaseURL == "" {
			return fieldErr(at+".base_url", "required (try a stub played in-process: stub:builtin for des, stub:silo-gather for silo; coordbench llm stub --help)")
		}
		if m.Name != "" && !llm.ValidLabel(m.Name) {
			return fieldErr(at+".name", "want at most 64 letters, digits, '.', '-' and single '_' inside (got %q)", m.Name)
		}
		if j, dup := labels[m.Label()]; dup {
			return fieldErr(at+".name", "models[%d] has the same label %q: give each model its own name", j, m.Label())
		}
		labels[m.Label()] = i
		nums := map[string]float64{"max_tokens": float64(m.MaxTokens),
			"limits.concurrency": float64(m.Limits.Concurrency), "limits.rpm": m.Limits.RPM,
			"price.input": m.Price.Input, "price.output": m.Price.Output, "price.cached_input": m.Price.CachedInput}
		if m.Temperature != nil {
			nums["temperature"] = *m.Temperature
		}
		if len(e.Models) == 0 {
			nums = map[string]float64{"price.input": m.Price.Input, "price.output": m.Price.Output, "price.cached_input": m.Price.CachedInput}
		}
		for _, k := range sortedKeys(nums) {
			if v := nums[k]; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fieldErr(at+"."+k, "want a number from 0 (got %v)", v)
			}
		}
	}
	if e.Des != nil && len(e.Des.Frameworks) > 0 && e.LLM != nil && e.LLM.Framework != "" {
		return fieldErr("des.frameworks", "give the frameworks here or llm.framework, not both")
	}
	return nil
}
