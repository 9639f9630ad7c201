package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/internal/inputfile"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

// serveConfig are the flags of sweep serve.
type serveConfig struct {
	file, out, natsURL, listen, store string
	// log, if set, gets a line per case outcome.
	log          io.Writer
	ackWait      time.Duration
	maxDeliver   int
	maxCaseBytes int64
}

func sweepServeCmd() *cobra.Command {
	var cfg serveConfig
	c := &cobra.Command{
		Use:   "serve FILE",
		Short: "Serve an experiment's cases to workers on other machines over NATS JetStream",
		Long: `Publish the experiment file and one message per unfinished case on a NATS
JetStream work queue, hand out the experiment's model-call limits to the
workers (coordbench worker), collect their results into --out, and once
every case is done, failed or dead-lettered, write the summaries sweep run
writes (byte-identical to a single-machine run's) and merge the workers'
response caches into --out/llm_cache.db. By default it starts an embedded
NATS server on --listen (loopback: give --listen 0.0.0.0:4222 to let other
machines in; it has no authentication); --nats URL uses an existing NATS
server with JetStream instead. Cases are stored by the workers in --out
(--store fs, a shared file system) or as objects in JetStream that serve
downloads (--store object). Serving again into the same --out resumes:
only unfinished cases are published. Exits non-zero if cases failed or
were dead-lettered (after --max-deliver deliveries, none of which
finished), and names them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.file = args[0]
			ctx, done := onInterrupt(cmd, "stopping; the queued cases stay in the stream (serve again to resume)")
			defer done()
			cfg.log = cmd.ErrOrStderr()
			return runServe(ctx, cfg, cmd.OutOrStdout(), nil)
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.out, "out", "", "the experiment directory (required; with --store fs, shared with the workers)")
	f.StringVar(&cfg.natsURL, "nats", "", "URL of an existing NATS server with JetStream (default: start an embedded one on --listen)")
	f.StringVar(&cfg.listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (loopback unless you say otherwise; port 0: a free port)")
	f.StringVar(&cfg.store, "store", jetstream.StoreFS, "where workers store cases: fs (the shared --out directory) or object (JetStream object store; serve downloads them)")
	f.DurationVar(&cfg.ackWait, "ack-wait", time.Minute, "a case whose worker sends no heartbeat for this long is delivered again (workers heartbeat every third of it)")
	f.IntVar(&cfg.maxDeliver, "max-deliver", 3, "deliveries of one case before it is dead-lettered")
	f.Int64Var(&cfg.maxCaseBytes, "max-case-bytes", jetstream.DefaultMaxCaseBytes, "bound on one case's stored artifacts (bytes)")
	return c
}

// runServe serves cfg.file; ready, if set, gets the NATS URL once serving.
func runServe(ctx context.Context, cfg serveConfig, w io.Writer, ready func(url string)) error {
	if cfg.out == "" {
		return errors.New("--out is required: the experiment directory")
	}
	if cfg.store != jetstream.StoreFS && cfg.store != jetstream.StoreObject {
		return fmt.Errorf("--store: want fs or object (got %q)", cfg.store)
	}
	if cfg.ackWait < time.Second || cfg.maxDeliver < 1 || cfg.maxCaseBytes < 1 {
		return fmt.Errorf("--ack-wait must be at least 1s, --max-deliver and --max-case-bytes at least 1")
	}
	data, err := inputfile.Read(cfg.file, "experiment file", sweep.MaxFileSize)
	if err != nil {
		return err
	}
	e, err := sweep.LoadData(cfg.file, data)
	if err != nil {
		return err
	}
	s, closer, err := serveSuite(cfg.file, e)
	if err != nil {
		return err
	}
	defer closer()
	limits, err := jetstream.ExperimentLimits(e)
	if err != nil {
		return err
	}
	finished, _, err := s.Finished(ctx, cfg.out)
	if err != nil {
		return err
	}
	nc, url, stop, err := serveNATS(cfg)
	if err != nil {
		return err
	}
	defer stop()
	name := e.Name
	if name == "" {
		name = filepath.Base(cfg.file)
	}
	fmt.Fprintf(w, "serving experiment %s (%s), id %s, on %s: %d cases, %d finished already\n", name, e.Benchmark, e.ID()[:12], url, len(s.IDs), len(finished))
	hint := ""
	if cfg.store == jetstream.StoreFS {
		hint = " --out " + cfg.out
	}
	fmt.Fprintf(w, "start workers with: coordbench worker --nats %s%s\n", url, hint)
	if ready != nil {
		ready(url)
	}
	spec := &jetstream.Spec{ID: e.ID(), Benchmark: e.Benchmark, FileName: filepath.Base(cfg.file), File: data, Store: cfg.store,
		AckWait: cfg.ackWait, MaxDeliver: cfg.maxDeliver, MaxCaseBytes: cfg.maxCaseBytes, Cases: len(s.IDs), Limits: limits}
	inputs := s.Inputs()
	spec.Inputs = &inputs
	out, err := jetstream.Serve(ctx, nc, jetstream.ServeOptions{Spec: spec, IDs: s.IDs, Finished: finished, Dir: cfg.out, Log: cfg.log, ModelCases: s.ModelCases()})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: the queued cases stay in the stream; run sweep serve again with --out %s to resume", cfg.out)
		}
		return err
	}
	if n, err := jetstream.MergeCaseCaches(ctx, cfg.out); err != nil {
		return err
	} else if n > 0 {
		fmt.Fprintf(w, "merged %d case caches into %s\n", n, filepath.Join(cfg.out, jetstream.MergedCache))
	}
	_, files, err := s.Finished(ctx, cfg.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cases: %d done (%d finished before), %d failed, %d dead-lettered; %d model-call permits handed out\n",
		out.Done, out.Kept, len(out.Failed), len(out.Dead), out.Granted)
	for _, f := range files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	if err := s.WriteCosts(w, cfg.out); err != nil {
		return err
	}
	if len(out.Failed) == 0 && len(out.Dead) == 0 {
		return out.LedgerErr
	}
	var msgs []string
	for _, id := range slices.Sorted(maps.Keys(out.Failed)) {
		msgs = append(msgs, fmt.Sprintf("failed %s: %s", id, firstLine(out.Failed[id])))
	}
	for _, d := range out.Dead {
		msgs = append(msgs, fmt.Sprintf("dead-lettered %s after %d deliveries (see %s)", d.Case, d.Deliveries, filepath.Join(cfg.out, jetstream.DeadLetterFile)))
	}
	return errors.Join(fmt.Errorf("%d of %d cases did not finish; serve again to retry them:\n  %s", len(msgs), len(s.IDs), strings.Join(msgs, "\n  ")), out.LedgerErr)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// serveSuite resolves the experiment e (read from file) for serve, which
// calls no model: its model clients are built in replay mode on an empty
// scratch cache, so that serve needs no API key (only workers do).
func serveSuite(file string, e *sweep.Experiment) (*sweep.Suite, func(), error) {
	var tmp string
	var err error
	o := sweep.ModelOptions{Stubs: stubPolicies()}
	if e.WithLLM() {
		if tmp, err = os.MkdirTemp("", "coordbench-serve-"); err != nil {
			return nil, nil, err
		}
		o = sweep.ModelOptions{OverrideCache: true, Cache: filepath.Join(tmp, "none.db"), CacheMode: llm.CacheReplay, Stubs: stubPolicies()}
	}
	cleanup := func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	m, closer, err := sweep.BuildModels(e, o)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	s, err := sweep.Resolve(file, e, m.Models, sweep.Whole())
	if err != nil {
		closer()
		cleanup()
		return nil, nil, err
	}
	return s, func() { closer(); cleanup() }, nil
}

// serveNATS connects to --nats, or starts the embedded server (its store
// in --out/nats) and connects to it; stop closes both.
func serveNATS(cfg serveConfig) (*nats.Conn, string, func(), error) {
	url := cfg.natsURL
	var emb *jetstream.Embedded
	if url == "" {
		var err error
		if emb, err = jetstream.StartEmbedded(cfg.listen, filepath.Join(cfg.out, "nats")); err != nil {
			return nil, "", nil, err
		}
		url = emb.URL()
	}
	nc, err := nats.Connect(url, nats.Name("coordbench sweep serve"), nats.MaxReconnects(-1))
	if err != nil {
		if emb != nil {
			emb.Close()
		}
		return nil, "", nil, fmt.Errorf("--nats %s: %w", url, err)
	}
	return nc, url, func() {
		nc.Drain()
		for !nc.IsClosed() {
			time.Sleep(10 * time.Millisecond)
		}
		if emb != nil {
			emb.Close()
		}
	}, nil
}
