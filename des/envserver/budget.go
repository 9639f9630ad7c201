package envserver

import (
	"fmt"
	"io"
)

// An episode's artifact budget bounds the bytes its streamed artifacts
// (trace.jsonl, decisions.jsonl, messages.jsonl, timing.jsonl) take
// together: a large plant played with fallbacks would otherwise write
// gigabytes. A write that would take them past the budget is refused
// whole (the files end on a complete line) and the episode is stopped: it
// ends before its next decision with status interrupted, and its Status
// says why. Every later write is refused too, so the directory holds at
// most the budget, plus the files written once at the end (metrics.json,
// manifest.json, instance.json, episode_timing.json: a few kilobytes, and
// the instance, bounded by the plant limits).

// DefaultArtifactBudget is the default of Config.ArtifactBudget: above
// what an episode of the largest scaling-study plant writes (gen:A64C256,
// 853 jobs, centralized, rule: 170 MB, nearly all decisions.jsonl), while
// a full server (DefaultMaxEpisodes) holds at most 16 GiB.
const DefaultArtifactBudget = 256 << 20

// budget counts the bytes of one episode's streamed artifacts. Only the
// episode's run goroutine writes through it.
type budget struct {
	limit int64
	used  int64
	spent bool
	// over is called once, at the first refused write, with the
	// artifact's name.
	over func(name string)
}

// wrap is a harness.Episode Wrap: it counts the writes to f against b.
func (b *budget) wrap(name string, f io.Writer) io.Writer {
	return &budgetWriter{b: b, name: name, w: f}
}

type budgetWriter struct {
	b    *budget
	name string
	w    io.Writer
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	b := w.b
	if !b.spent && b.used+int64(len(p)) > b.limit {
		b.spent = true
		b.over(w.name)
	}
	if b.spent {
		return 0, fmt.Errorf("%s: %s", w.name, b.message())
	}
	n, err := w.w.Write(p)
	b.used += int64(n)
	return n, err
}

// message says that the budget is spent, and how to raise it.
func (b *budget) message() string {
	return fmt.Sprintf("the episode's artifact budget of %d bytes is spent (raise it with des serve --artifact-budget)", b.limit)
}
