package llm

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/coordbench/coordbench/internal/opterr"
)

// Cache modes for Config.CacheMode.
const (
	CacheOff       = "off"        // never read or write the cache
	CacheReadWrite = "read-write" // answer from the cache when possible; store new responses
	CacheReplay    = "replay"     // answer only from the cache; a miss is an error; never use the network
)

// Defaults applied by New to zero fields.
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxAttempts    = 5
	DefaultConcurrency    = 8
	DefaultRetryBaseDelay = 1 * time.Second
	DefaultRetryMaxDelay  = 30 * time.Second
	// MaxRetryAfter bounds how long a server may ask us to wait (Retry-After);
	// a longer advised wait ends the call with an error instead of sleeping.
	MaxRetryAfter = 5 * time.Minute
)

// Config configures a Client. Only BaseURL and Model are required.
type Config struct {
	// BaseURL is the OpenAI-compatible API root, e.g.
	// "https://api.openai.com/v1" or "http://127.0.0.1:8000/v1"; requests go to
	// BaseURL + "/chat/completions". No credentials, query or fragment.
	// A "stub:POLICY[?OPTIONS]" URL (StubScheme) names a stub model of
	// Stubs, played in this process.
	BaseURL string
	// Stubs are the stub models a "stub:" BaseURL may name (nil: none).
	// Validate checks the name against them when set.
	Stubs Stubs
	// Model is sent as "model".
	Model string
	// APIKeyEnv names the environment variable holding the API key, read once
	// by New. Empty means no key (local servers). The key itself is never
	// written anywhere: not in errors, logs, the cache or artifacts.
	APIKeyEnv string
	// Temperature is sent as "temperature" when non-nil; nil sends none,
	// and the server's default applies (the published SILO-BENCH call
	// sends no sampling parameter). In [0, 2].
	Temperature *float64
	// MaxTokens is sent as "max_completion_tokens"; 0 means the server default
	// (field not sent).
	MaxTokens int
	// Seed is sent as "seed" when non-nil (servers that support it use it for
	// sampling; others ignore it).
	Seed *int64
	// Timeout bounds each attempt (connect, wait, read body). Default 2 min.
	Timeout time.Duration
	// MaxAttempts bounds attempts per call, the first included. Default 5.
	MaxAttempts int
	// Concurrency bounds simultaneous requests to this base URL, shared by
	// every Client of the same Endpoints with the same base URL (this
	// Client alone when Endpoints is nil). Default 8.
	Concurrency int
	// RPM, if > 0, bounds requests (attempts) per minute to this base URL,
	// shared like Concurrency.
	RPM float64
	// BreakerThreshold is how many attempts in a row, across the calls of
	// an endpoint, may fail without a usable response (timeouts,
	// connection failures, 5xx) before its circuit breaker opens and
	// calls fail at once (with the last failure's class, the reason
	// naming the breaker) for BreakerCooldown.
	// Defaults max(MaxAttempts, 3) (so that one call's own retries never
	// trip it, while calls failing together do) and 30 s; a negative
	// threshold disables the breaker.
	// Shared like Concurrency: the first Client of an endpoint fixes them.
	BreakerThreshold int
	BreakerCooldown  time.Duration
	// Endpoints owns the per-endpoint state (limits, connection pool,
	// Stats) shared with other Clients; nil gives this Client its own.
	Endpoints *Endpoints
	// Limiter, if set, is asked for a permit before every attempt, after
	// this process's own Concurrency and RPM limits, and the permit is
	// released when the attempt ends: limits shared by many processes
	// (a distributed sweep's coordinator). Nil: only the local limits.
	Limiter Limiter
	// RetryBaseDelay and RetryMaxDelay shape the exponential backoff:
	// attempt n waits about base·2^(n-1), capped at max, with jitter.
	// Defaults 1 s and 30 s.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Cache is the response cache; CacheMode says how it is used:
	// CacheOff, CacheReadWrite or CacheReplay. An empty CacheMode means
	// CacheOff without a Cache and CacheReadWrite with one.
	Cache     *Cache
	CacheMode string
	// CacheKeyURL keeps BaseURL in the cache key. By default the key is
	// the model and the request alone, so that a replay survives a new
	// port or host of the same model (a stub on a free port, a server
	// moved); set it when two endpoints serve different models under one
	// name.
	CacheKeyURL bool
	// OnRetry, if set, is called each time an attempt failed and the
	// client is about to wait and retry, so that a caller can show that a
	// call is stalled. It is called from the goroutine making the call
	// (concurrently for concurrent calls) and must return quickly. It
	// changes nothing in the requests, the replies or the cache.
	OnRetry func(Retry)
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// configError is a bad value of the Config field option.
func configError(option, format string, a ...any) error {
	return configErr(opterr.New(option, format, a...))
}

// configErr prefixes a Config error.
func configErr(err error) error { return fmt.Errorf("llm: config: %w", err) }

// withDefaults validates cfg and fills zero fields with defaults.
func (cfg Config) withDefaults() (Config, error) {
	bad := func(option, format string, a ...any) (Config, error) {
		return Config{}, configError(option, format, a...)
	}
	base, err := normalizeBaseURL(cfg.BaseURL)
	if err != nil {
		return Config{}, err
	}
	cfg.BaseURL = base
	if IsStubURL(base) && cfg.Stubs != nil {
		if _, err := stubHandler(cfg); err != nil { // a fresh handler, dropped: the name is checked now
			return Config{}, err
		}
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return bad("Model", "empty (a model name is required)")
	}
	if cfg.APIKeyEnv != "" && !envNameRE.MatchString(cfg.APIKeyEnv) {
		// Do not echo the value: a common mistake is to pass the key itself.
		return bad("APIKeyEnv", "must be the NAME of an environment variable (letters, digits, underscore), not the key itself")
	}
	if t := cfg.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 2) {
		return bad("Temperature", "%v out of range [0, 2]", *t)
	}
	if cfg.MaxTokens < 0 {
		return bad("MaxTokens", "%d < 0", cfg.MaxTokens)
	}
	if cfg.Timeout < 0 || cfg.MaxAttempts < 0 || cfg.Concurrency < 0 || cfg.RPM < 0 || math.IsNaN(cfg.RPM) ||
		cfg.RetryBaseDelay < 0 || cfg.RetryMaxDelay < 0 {
		return Config{}, configErr(errors.New("timeout, max attempts, concurrency, rpm and retry delays must not be negative"))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.RetryBaseDelay == 0 {
		cfg.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if cfg.BreakerThreshold == 0 {
		// One call's worth, and at least 3: a call's own retries never
		// trip it, nor does one failed call among working ones.
		cfg.BreakerThreshold = max(cfg.MaxAttempts, 3)
	}
	if cfg.BreakerCooldown <= 0 {
		cfg.BreakerCooldown = DefaultBreakerCooldown
	}
	if cfg.RetryMaxDelay == 0 {
		cfg.RetryMaxDelay = DefaultRetryMaxDelay
	}
	cfg.RetryMaxDelay = max(cfg.RetryMaxDelay, cfg.RetryBaseDelay)
	switch cfg.CacheMode {
	case "":
		cfg.CacheMode = CacheOff
		if cfg.Cache != nil {
			cfg.CacheMode = CacheReadWrite
		}
	case CacheOff:
	case CacheReadWrite, CacheReplay:
		if cfg.Cache == nil {
			return bad("Cache", "cache mode %q needs a cache", cfg.CacheMode)
		}
	default:
		return bad("CacheMode", "%q: want off, read-write or replay", cfg.CacheMode)
	}
	return cfg, nil
}

// normalizeBaseURL checks u and returns it as scheme://host[:port]/path with no
// trailing slash.
func normalizeBaseURL(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", configError("BaseURL", "empty (want the API root, e.g. http://127.0.0.1:8000/v1)")
	}
	if IsStubURL(raw) {
		_, _, norm, err := parseStubURL(raw)
		return norm, err
	}
	if !strings.Contains(raw, "://") {
		// "127.0.0.1:8000/v1" does not parse, "localhost:8000/v1" parses
		// with scheme "localhost": either way the scheme is missing.
		return "", configError("BaseURL", "no scheme: give the API root with http:// or https:// in front, e.g. http://127.0.0.1:8000/v1")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url errors quote the input; it may contain credentials, so do not wrap.
		return "", configError("BaseURL", "does not parse as a URL (want the API root, e.g. http://127.0.0.1:8000/v1)")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", configError("BaseURL", "scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", configError("BaseURL", "no host")
	}
	if u.User != nil {
		return "", configErr(&opterr.Error{Option: "BaseURL", See: []string{"APIKeyEnv"},
			Err: errors.New("must not contain credentials; put the key in an environment variable and name that")})
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", configError("BaseURL", "must not have a query or fragment")
	}
	return u.Scheme + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// readKey reads the API key named by cfg.APIKeyEnv. In replay mode a missing
// key is not an error (no request is ever sent).
func readKey(cfg Config) (string, error) {
	if cfg.APIKeyEnv == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(cfg.APIKeyEnv)
	if (!ok || v == "") && cfg.CacheMode != CacheReplay {
		return "", configError("APIKeyEnv", "environment variable %s is not set or empty", cfg.APIKeyEnv)
	}
	return v, nil
}
