package llm

import (
	"math"
	"regexp"
	"time"
)

// Spec says what a model endpoint is: the model and how to call it
// (Endpoint), how hard this process may call it (Limits) and what its
// tokens cost (Price). It is the one description of a model that both
// benchmarks, the command line, experiment files (their models entries, in
// the YAML and JSON shapes of its tags) and distributed workers use; a
// Client is built from it with Config. Limits and Price change no reply:
// they are not part of an experiment's identity (json "-").
type Spec struct {
	Endpoint `yaml:",inline"`
	Limits   Limits `yaml:"limits,omitempty" json:"-"`
	Price    Price  `yaml:"price,omitempty" json:"-"`
}

// Endpoint names a model behind an OpenAI-compatible endpoint and the
// request settings that change its replies.
type Endpoint struct {
	// Name labels the model in case ids and the summaries' model column
	// (default: Model); see ValidLabel.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Model is sent as "model".
	Model string `yaml:"model,omitempty" json:"model"`
	// BaseURL is the API root (Config.BaseURL).
	BaseURL string `yaml:"base_url,omitempty" json:"base_url"`
	// APIKeyEnv names the environment variable holding the key
	// (Config.APIKeyEnv); the key itself is never written anywhere.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// Temperature is sent only when set: by default a request carries no
	// sampling parameter, as the published SILO-BENCH call (the server's
	// defaults apply; docs/llm.md).
	Temperature *float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	MaxTokens   int      `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	Seed        *int64   `yaml:"seed,omitempty" json:"seed,omitempty"`
}

// Label is the model's name in case ids and summaries: Name, else Model.
func (e Endpoint) Label() string {
	if e.Name != "" {
		return e.Name
	}
	return e.Model
}

// Limits bound one process's calls to a model (Config.Concurrency and
// Config.RPM).
type Limits struct {
	// Concurrency is the number of requests at once (0: DefaultConcurrency).
	Concurrency int `yaml:"concurrency,omitempty"`
	// RPM is requests per minute (0: unlimited).
	RPM float64 `yaml:"rpm,omitempty"`
}

// Price is what a model's tokens cost, in US dollars per million tokens.
// Responses replayed from the response cache cost nothing.
type Price struct {
	Input  float64 `yaml:"input,omitempty" json:"input"`
	Output float64 `yaml:"output,omitempty" json:"output"`
	// CachedInput is the price of input tokens the provider serves from
	// its prompt cache (Usage.PromptCachedTokens, OpenAI's
	// usage.prompt_tokens_details.cached_tokens). Unset (0), no discount
	// was given and none is applied: they are priced at Input. Estimates
	// cannot know the hits and price every input token at Input. Not to
	// be confused with the response cache, whose replays are free.
	CachedInput float64 `yaml:"cached_input,omitempty" json:"cached_input,omitempty"`
}

// PromptCachedInput is the price of an input token served from the
// provider's prompt cache: CachedInput when set (> 0), else Input.
func (p Price) PromptCachedInput() float64 {
	if p.CachedInput > 0 {
		return p.CachedInput
	}
	return p.Input
}

// MaxLabel bounds a model label's length.
const MaxLabel = 64

// labelRE is a model label: a case-id part (letters, digits, '.', '-',
// single '_' inside).
var labelRE = regexp.MustCompile(`^[A-Za-z0-9.-]+(_[A-Za-z0-9.-]+)*$`)

// ValidLabel reports whether s can label a model (Endpoint.Name): at most
// MaxLabel letters, digits, '.', '-' and single '_' inside.
func ValidLabel(s string) bool { return len(s) <= MaxLabel && labelRE.MatchString(s) }

// Options are the settings of a model's clients that are not the model's
// own: how long and how often to try, the response cache, and what the
// clients of a process share. Spec.Config combines them with a Spec.
type Options struct {
	Timeout     time.Duration // Config.Timeout
	MaxAttempts int           // Config.MaxAttempts
	Cache       *Cache        // Config.Cache
	CacheMode   string        // Config.CacheMode
	CacheKeyURL bool          // Config.CacheKeyURL
	Endpoints   *Endpoints    // Config.Endpoints
	Limiter     Limiter       // Config.Limiter
	OnRetry     func(Retry)   // Config.OnRetry
	Stubs       Stubs         // Config.Stubs
}

// Config is the client configuration of s with o, for the model named
// model (s.Model when empty: a caller that sends one Spec's requests to
// several models, one per role, names each).
func (s Spec) Config(model string, o Options) Config {
	if model == "" {
		model = s.Model
	}
	return Config{
		BaseURL: s.BaseURL, Model: model, APIKeyEnv: s.APIKeyEnv, Temperature: s.Temperature,
		MaxTokens: s.MaxTokens, Seed: s.Seed, Timeout: o.Timeout, MaxAttempts: o.MaxAttempts,
		Concurrency: s.Limits.Concurrency, RPM: s.Limits.RPM, Cache: o.Cache, CacheMode: o.CacheMode, CacheKeyURL: o.CacheKeyURL,
		Endpoints: o.Endpoints, Limiter: o.Limiter, OnRetry: o.OnRetry, Stubs: o.Stubs,
	}
}

// Validate checks s as New would check its Config (reading no key), and
// its Name as a label; errors are *opterr.Error naming the field.
func (s Spec) Validate() error {
	if s.Name != "" && !ValidLabel(s.Name) {
		return configError("Name", "want at most %d letters, digits, '.', '-' and single '_' inside (got %q)", MaxLabel, s.Name)
	}
	for _, v := range []float64{s.Price.Input, s.Price.Output, s.Price.CachedInput} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return configError("Price", "want US dollars per million tokens from 0 (got %v)", v)
		}
	}
	return s.Config("", Options{}).Validate()
}

// Validate checks cfg as New does, without reading the API key: the
// first bad field, as an *opterr.Error naming it.
func (cfg Config) Validate() error {
	_, err := cfg.withDefaults()
	return err
}
