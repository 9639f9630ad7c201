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
	// token is the workers' token given (read from --token-env), "" to
	// generate one when the embedded server requires credentials.
	token string
	// open lets the embedded server run on another address without them.
	open bool
	// log, if set, gets a line per case outcome.
	log          io.Writer
	ackWait      time.Duration
	maxDeliver   int
	maxCaseBytes int64
}

func sweepServeCmd() *cobra.Command {
	var cfg serveConfig
	var tokenEnv string
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
machines in); --nats URL uses an existing NATS server with JetStream
instead. The embedded server requires credentials on any --listen but
127.0.0.1, ::1 or localhost (and on those too when --token-env names a set
variable): workers present a token, read from the variable --token-env
names or else generated and printed once on stdout, and may only do what a
worker does (no control messages, no change to the experiment or the
streams); serve's own password never leaves its process. --open runs it on
another address without them. Cases are stored by the workers in --out
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
			cfg.token = os.Getenv(tokenEnv)
			return runServe(ctx, cfg, cmd.OutOrStdout(), nil)
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.out, "out", "", "the experiment directory (required; with --store fs, shared with the workers)")
	f.StringVar(&cfg.natsURL, "nats", "", "URL of an existing NATS server with JetStream (default: start an embedded one on --listen)")
	f.StringVar(&cfg.listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (loopback unless you say otherwise; port 0: a free port)")
	f.StringVar(&tokenEnv, "token-env", jetstream.TokenEnv, "the environment variable that holds the workers' token (unset: one is generated and printed when the embedded server requires credentials, on any --listen but 127.0.0.1, ::1 or localhost)")
	f.BoolVar(&cfg.open, "open", false, "run the embedded server on another address than 127.0.0.1, ::1 or localhost without credentials: anyone who reaches --listen can read every case and forge results")
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
	nc, url, cred, stop, err := serveNATS(cfg, e.ID())
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
	switch {
	case cred != nil && cfg.token == "":
		// The one place the token is written: serve's stdout.
		fmt.Fprintf(w, "workers' token (shown once; the server refuses workers without it): %s=%s\n", jetstream.TokenEnv, cred.Worker)
	case cred != nil:
		fmt.Fprintf(w, "the server refuses workers without the token given to serve (in %s)\n", jetstream.TokenEnv)
	case cfg.natsURL == "" && cfg.open:
		fmt.Fprintf(w, "warning: --open: the NATS server on %s has no credentials: anyone who reaches it can read every case and forge results\n", url)
	}
	fmt.Fprintf(w, "start workers with: coordbench worker --nats %s%s\n", url, hint)
	if ready != nil {
		ready(url)
	}
	spec := &jetstream.Spec{ID: e.ID(), Benchmark: e.Benchmark, FileName: filepath.Base(cfg.file), File: data, Store: cfg.store,
		AckWait: cfg.ackWait, MaxDeliver: cfg.maxDeliver, MaxCaseBytes: cfg.maxCaseBytes, Cases: len(s.IDs), Limits: limits}
	inputs := s.Inputs()
	spec.Inputs = &inputs
	out, err := jetstream.Serve(ctx, nc, jetstream.ServeOptions{Spec: spec, IDs: s.IDs, Finished: finished, Dir: cfg.out, Log: cfg.log, ModelCases: s.ModelCases(),
		CaseFinished: func(id string) bool { return s.CaseFinished(cfg.out, id) }})
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
	done, files, err := s.Finished(ctx, cfg.out)
	if err != nil {
		return err
	}
	// Serve checked every case it counted (ServeOptions.Finished); a case
	// counted done that the summaries leave out would be a bug of that
	// check: say so rather than exit 0 on a summary short of rows.
	if len(done) != out.Done {
		return fmt.Errorf("%d cases counted done, but the summaries in %s list %d: serve again to run the others", out.Done, cfg.out, len(done))
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
// in --out/nats) of experiment id and connects to it; stop closes both.
// The embedded server requires credentials (cred, nil when it does not)
// on any address but the default loopback one (jetstream.LoopbackListen),
// and whenever a token is given.
func serveNATS(cfg serveConfig, id string) (*nats.Conn, string, *jetstream.Credentials, func(), error) {
	url := cfg.natsURL
	var emb *jetstream.Embedded
	var cred *jetstream.Credentials
	opts := []nats.Option{nats.Name("coordbench sweep serve"), nats.MaxReconnects(-1)}
	if url == "" {
		sc := jetstream.ServerConfig{Listen: cfg.listen, StoreDir: filepath.Join(cfg.out, "nats"), Experiment: id, Open: cfg.open}
		if cfg.token != "" || (!cfg.open && !jetstream.LoopbackListen(cfg.listen)) {
			var err error
			if cred, err = jetstream.NewCredentials(cfg.token); err != nil {
				return nil, "", nil, nil, err
			}
			sc.Auth = cred
			opts = append(opts, cred.ServeConnect())
		}
		var err error
		if emb, err = jetstream.StartServer(sc); err != nil {
			return nil, "", nil, nil, err
		}
		url = emb.URL()
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if emb != nil {
			emb.Close()
		}
		return nil, "", nil, nil, fmt.Errorf("--nats %s: %w", url, err)
	}
	return nc, url, cred, func() {
		nc.Drain()
		for !nc.IsClosed() {
			time.Sleep(10 * time.Millisecond)
		}
		if emb != nil {
			emb.Close()
		}
	}, nil
}
