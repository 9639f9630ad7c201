package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/sweep"
	"github.com/coordbench/coordbench/sweep/jetstream"
)

// workerConfig are the flags of coordbench worker.
type workerConfig struct {
	natsURL, out, scratch, name, experimentDir string
	// token is the workers' token sweep serve printed or was given (read
	// from --token-env; "": none).
	token          string
	slots          int
	wait           time.Duration
	allowEndpoints []string
}

func workerCmd() *cobra.Command {
	var cfg workerConfig
	var tokenEnv string
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run the cases a sweep serve hands out over NATS JetStream",
		Long: `Connect to the NATS server of a sweep serve (--nats), read the experiment
it serves (no copy of the file is needed, but instance or paradigm files
the experiment names are read from --experiment-dir), and run its cases
with the code of sweep run, --workers at a time, until every case has an
outcome. Each case is heartbeated while it runs, stored (in the shared
directory --out, or in the JetStream object store, as serve chose) and
only then acknowledged, so a worker killed mid-case loses nothing: its
case is delivered again. Model calls ask serve for a permit first, so the
experiment's concurrency and rpm limits hold across all workers; API keys
are read from this machine's environment, by the variable name in the
experiment, and sent only to loopback endpoints and those allowed with
--allow-endpoint (a case of another endpoint fails, saying so). A server
that requires credentials (sweep serve on a --listen other than 127.0.0.1)
takes the token serve printed, from the variable --token-env names. Ctrl-C
stops pulling cases and finishes those in flight; a second Ctrl-C cuts
them short and hands them back to the queue (the model calls they made are
reported, for the experiment's cost files; a case that finished all the
same is stored).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.name == "" {
				host, _ := os.Hostname()
				cfg.name = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), nuid.Next()[:6])
			}
			cfg.token = os.Getenv(tokenEnv)
			ctx, abort, done := workerSignals(cmd)
			defer done()
			rep, err := runWorker(ctx, abort, cfg, cmd.ErrOrStderr(), nil)
			if rep != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "worker %s: experiment %s: ran %d cases (%d failed), %d already stored, %d handed back\n",
					cfg.name, rep.ExperimentID[:12], rep.Ran, rep.Failed, rep.Kept, rep.Returned)
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.natsURL, "nats", "nats://127.0.0.1:4222", "URL of the NATS server sweep serve uses")
	f.IntVar(&cfg.slots, "workers", 1, "cases run at once")
	f.StringVar(&cfg.out, "out", "", "the experiment directory of sweep serve, on a shared file system (needed when serve stores cases there, --store fs)")
	f.StringVar(&cfg.scratch, "scratch", "", "where cases run before they are stored (default: the system's temporary directory)")
	f.StringVar(&cfg.name, "name", "", "this worker's name in results and status (default: host name and process id)")
	f.StringVar(&cfg.experimentDir, "experiment-dir", ".", "where relative paths in the experiment file (instance and paradigm files) are read from")
	f.StringSliceVar(&cfg.allowEndpoints, "allow-endpoint", nil, "model base URLs the experiment may call besides loopback ones (repeatable or a comma list); API keys go to no other")
	f.StringVar(&tokenEnv, "token-env", jetstream.TokenEnv, "the environment variable that holds the token sweep serve printed (for a server that requires credentials)")
	f.DurationVar(&cfg.wait, "wait", 0, "give up if no experiment is served within this time (0: wait until one is)")
	return experimentCmd(withTracing(c))
}

// workerSignals: the first Ctrl-C (or SIGTERM) cancels ctx (stop pulling),
// the second cancels abort (hand the cases in flight back).
func workerSignals(cmd *cobra.Command) (ctx, abort context.Context, done func()) {
	ctx, stop := context.WithCancel(cmd.Context())
	abort, stopAbort := context.WithCancel(context.WithoutCancel(cmd.Context())) // the values (a tracer), not the end, of the command's context
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-finished:
				return
			case <-sigs:
				if n == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "\ninterrupted: pulling no more cases, finishing those in flight (Ctrl-C again to hand them back)")
					stop()
				} else {
					fmt.Fprintln(cmd.ErrOrStderr(), "\ninterrupted again: handing the cases in flight back to the queue")
					stopAbort()
					return
				}
			}
		}
	}()
	return ctx, abort, func() {
		signal.Stop(sigs)
		close(finished)
		stop()
		stopAbort()
	}
}

// runWorker connects and runs cases until the experiment is over; run,
// if set, replaces the case runner (tests wrap it).
func runWorker(ctx, abort context.Context, cfg workerConfig, log io.Writer, wrap func(jetstream.RunCase) jetstream.RunCase) (*jetstream.WorkerReport, error) {
	if err := checkWorkers(cfg.slots); err != nil {
		return nil, err
	}
	expDir, err := filepath.Abs(cfg.experimentDir)
	if err != nil {
		return nil, err
	}
	if cfg.token != "" {
		if err := jetstream.CheckToken(cfg.token); err != nil {
			return nil, fmt.Errorf("--token-env: %w", err)
		}
	}
	opts := append([]nats.Option{nats.Name("coordbench worker " + cfg.name), nats.MaxReconnects(60), nats.ReconnectWait(time.Second)},
		jetstream.WorkerConnect(cfg.token)...)
	nc, err := nats.Connect(cfg.natsURL, opts...)
	if errors.Is(err, nats.ErrAuthorization) {
		if cfg.token == "" {
			return nil, fmt.Errorf("--nats %s: %w: the server requires the workers' token sweep serve printed: set it in %s (or the variable --token-env names)", cfg.natsURL, err, jetstream.TokenEnv)
		}
		return nil, fmt.Errorf("--nats %s: %w: the server refused the token (not the one this serve printed?)", cfg.natsURL, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--nats %s: %w", cfg.natsURL, err)
	}
	defer nc.Close()
	trust, err := jetstream.NewTrust(cfg.allowEndpoints)
	if err != nil {
		return nil, err
	}
	// A case's error reaches the user through serve, not through this
	// command: the worker puts it in its own flag terms.
	run := caseRunner(expDir, trust, termsOf(workerCmd()))
	if wrap != nil {
		run = wrap(run)
	}
	return jetstream.Worker(ctx, abort, nc, jetstream.WorkerOptions{Name: cfg.name, Slots: cfg.slots, Dir: cfg.out, Scratch: cfg.scratch,
		Run: run, Log: log, WaitSpec: cfg.wait, Check: func(spec *jetstream.Spec) error { return checkInputs(expDir, trust, spec) },
		Finished: func(spec *jetstream.Spec) (func(string) bool, error) {
			return storedCheck(expDir, trust, spec, cfg.out)
		}})
}

// caseRunner runs one case of a served experiment with the code of sweep
// run: the experiment parsed from the served bytes (relative paths read
// from expDir), its models built for the case (workerModels), the suite
// resolved down to the case (refused if it resolves from inputs other
// than serve's: Spec.Inputs) and run into the case's scratch directory.
// An experiment the worker does not trust fails the case, saying so in
// terms of the worker's flags.
func caseRunner(expDir string, trust jetstream.Trust, t terms) jetstream.RunCase {
	return func(ctx context.Context, c jetstream.CaseRun) (string, error) {
		e, err := sweep.Parse(c.Spec.FileName, c.Spec.File)
		if err != nil {
			return "", err
		}
		e.Dir = expDir
		if e.ID() != c.Spec.ID {
			return "", errors.New("the served experiment does not match its id (serve and worker of different coordbench versions?)")
		}
		if err := trust.Check(e); err != nil {
			return "", inFlagTerms(t, err)
		}
		m, closer, err := workerModels(e, c.Cache, c.Limiter)
		if err != nil {
			return "", err
		}
		defer closer()
		s, err := sweep.ResolveCase(c.Spec.FileName, e, m, c.ID)
		if err != nil {
			return "", err
		}
		if c.Spec.Inputs != nil { // checked at the start too (checkInputs): files may change meanwhile
			if err := c.Spec.Inputs.Differs(s.Inputs()); err != nil {
				return "", err
			}
		}
		return s.RunOne(ctx, c.Dir)
	}
}

// storedCheck is the check of a case stored in the shared directory dir
// of the served experiment: the suite's own (sweep.Suite.CaseFinished),
// on the suite resolved as serve resolves it (no model is called). An
// experiment the worker does not trust is not resolved: no case there
// counts as stored, and its cases fail, saying why.
func storedCheck(expDir string, trust jetstream.Trust, spec *jetstream.Spec, dir string) (func(string) bool, error) {
	e, err := sweep.Parse(spec.FileName, spec.File)
	if err != nil {
		return nil, err
	}
	if trust.Check(e) != nil {
		return func(string) bool { return false }, nil
	}
	e.Dir = expDir
	s, closer, err := serveSuite(spec.FileName, e)
	if err != nil {
		return nil, err
	}
	closer() // the check reads manifests only
	return func(id string) bool { return s.CaseFinished(dir, id) }, nil
}

// checkInputs refuses a served experiment that this worker would resolve
// from inputs other than serve's (Spec.Inputs: another version of an
// instance file in expDir, another coordbench) or cannot resolve at all
// (a file missing), before it takes a case, so that the cases go to other
// workers. An experiment the worker does not trust is left to the cases,
// which fail saying why (and nothing is read for it).
func checkInputs(expDir string, trust jetstream.Trust, spec *jetstream.Spec) error {
	if spec.Inputs == nil {
		return nil
	}
	e, err := sweep.Parse(spec.FileName, spec.File)
	if err != nil || trust.Check(e) != nil {
		return nil
	}
	e.Dir = expDir
	in, err := sweep.InputsOf(spec.FileName, e)
	if err != nil {
		return fmt.Errorf("cannot resolve the experiment here (--experiment-dir %s): %w", expDir, err)
	}
	return spec.Inputs.Differs(in)
}
