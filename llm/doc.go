// Package llm is coordbench's one client for OpenAI-compatible chat-completions
// servers (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM, OpenRouter, ...), used by
// both benchmark families.
//
// A [Client] is built from a [Config] (base URL, model, the NAME of the
// environment variable holding the API key, temperature, max tokens, seed,
// timeouts and limits) and answers [Client.Complete] with a [Response]: the
// content of the first choice, the finish reason, token [Usage], latency, the
// number of attempts, and whether it came from the cache.
//
//	c, err := llm.New(llm.Config{
//		BaseURL:   "http://127.0.0.1:8000/v1",
//		Model:     "qwen2.5-7b-instruct",
//		APIKeyEnv: "OPENAI_API_KEY", // empty for local servers without keys
//	})
//	resp, err := c.Complete(ctx, []llm.Message{
//		{Role: llm.RoleSystem, Content: "You are a scheduler."},
//		{Role: llm.RoleUser, Content: "Which job next?"},
//	})
//
// Native function calling: [Client.CompleteWithTools] offers [Tool]s (name,
// description, JSON Schema parameters) and returns the model's calls in
// Response.ToolCalls, their arguments as the raw text the model produced
// (untrusted: possibly invalid JSON). To continue, append an assistant
// [Message] carrying the ToolCalls and one [RoleTool] message per call, with
// ToolCallID and the result as Content. Tools are part of the cache key, and
// cached responses keep their tool calls; requests without tools have the
// same keys as before tools existed.
//
// What the package does around each call:
//
//   - Retries. 429, 408, 5xx, attempt timeouts, dropped connections and
//     unreadable bodies (truncated, non-JSON) are retried with exponential
//     backoff and jitter, honouring Retry-After (seconds or HTTP date) and
//     retry-after-ms, up to Config.MaxAttempts attempts. Other 4xx (400, 401,
//     403, 404, 422) and a response with no choices fail at once. openai-go's
//     own retries are switched off, so every retry is ours and is counted.
//     The jitter comes from a seeded source and only shifts timing, which
//     never enters results.
//   - Limits. Concurrency and RPM are per endpoint (base URL) and shared by
//     every Client in the process pointing at it, so many parallel episodes
//     share one limit. The first Client for a base URL sets them; a later
//     Client asking for other values gets an error. Config.Limiter adds
//     limits shared by many processes (a distributed sweep's coordinator).
//   - Cache. A [Cache] (one SQLite file, WAL) keyed by base URL, model, the
//     full message list and every generation parameter sent. Modes: off,
//     read-write, replay (cache only: a miss is a [*CacheMissError] and no
//     request is ever sent). A cached response has the original content and
//     usage, with Cached = true, so a replayed suite gives identical results
//     and identical token totals.
//   - Accounting. Response.Usage per call, [Usage.Add] and [Tally] to sum per
//     agent, episode or suite; [Stats] (per endpoint) for live progress.
//   - Secrets. The key is read once from the named environment variable and
//     only ever sent in the Authorization header; it is redacted from error
//     messages and never stored in the cache. openai-go's default OPENAI_*
//     environment variables are not read.
//
// Errors are [*Error] values that name the endpoint and model:
//
//	llm: POST http://127.0.0.1:8000/v1/chat/completions (model "m"): 401 Unauthorized: bad key — check the API key in $OPENAI_API_KEY ...
//
// Edge cases in responses: an empty choices array is an error (not retried);
// null content is returned as ""; a missing usage object gives zero Usage.
//
// [Client.CompleteRequest] also sends tool_choice and response_format
// ([Request]); both are in the cache key, and a request without them keeps
// its old key.
//
// A base URL "stub:POLICY" (stub.go) plays a stub model in-process: the
// client's transport calls the handler that Config.Stubs gives for the
// name, with no listener. The package plays no stub itself; a program
// passes its list (stubmodel.Policies) as a value.
//
// Package stubmodel provides the stub server the tests and `coordbench llm stub` use.
package llm
