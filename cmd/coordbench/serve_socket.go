package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/envsock"
	"github.com/coordbench/coordbench/des/policy"
)

func desServeSocketCmd() *cobra.Command {
	var path string
	var files []string
	var maxEnvs, maxSessions, workers, procs int
	var idle time.Duration
	c := &cobra.Command{
		Use:   "serve-socket",
		Short: "Host vectorized episodes on a unix socket (the fast local transport)",
		Long: `Host vectorized learning environments on a unix socket with a binary,
batched protocol: one request steps n episodes, one reply carries their
observation vectors, masks, rewards and ends as flat arrays. It is the
fast local transport of python/coordbench_env (vector_env(n, socket=PATH));
use des serve (HTTP/JSON) for remote clients. The observations, masks,
rewards and seeds are those of des serve, play/others included. Where the
platform can, a client may take the arrays in memory shared with the
server (Python's default) instead of through the socket, and
pipelined_env keeps one group of episodes stepping while the learner
works on another.
See docs/python-env.md.

The socket is created with mode 0600 (only its owner may connect) and
removed at exit; an existing file at --socket is refused. Each connection
is one session of at most --max-envs episodes; at most --max-sessions are
served at once, and one idle for --idle-timeout is closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" {
				return errors.New("--socket PATH is required")
			}
			if workers < 1 || workers > envsock.MaxWorkers {
				return fmt.Errorf("--workers %d: want 1 to %d", workers, envsock.MaxWorkers)
			}
			if procs < 0 {
				return fmt.Errorf("--procs %d: want 0 (every processor) or more", procs)
			}
			if procs > 0 { // the command's own setting, given back when it returns (an in-process caller keeps its own)
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			}
			if _, err := os.Lstat(path); err == nil {
				return fmt.Errorf("--socket %s: the file exists; remove it or choose another path", path)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("--socket %s: %w", path, err)
			}
			paradigms, err := paradigmSet(files)
			if err != nil {
				return err
			}
			srv, err := envsock.New(envsock.Config{Paradigms: paradigms, Builtins: policy.Builtins(), MaxEnvs: maxEnvs, MaxSessions: maxSessions, IdleTimeout: idle, Workers: workers})
			if err != nil {
				return err
			}
			ln, err := listenPrivate(path)
			if err != nil {
				return err
			}
			defer os.Remove(path)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "coordbench socket environment server on %s\n", path)
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err = <-errc:
			case <-ctx.Done():
			}
			ln.Close()
			srv.Close()
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "server stopped")
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&path, "socket", "", "path of the unix socket to create (required)")
	f.StringArrayVar(&files, "paradigm-file", nil, "also serve a custom paradigm from a YAML file (repeatable); sessions name it by its mode_id")
	f.IntVar(&maxEnvs, "max-envs", envsock.DefaultMaxEnvs, "episodes of one session (vector_env's n)")
	f.IntVar(&maxSessions, "max-sessions", envsock.DefaultMaxSessions, "sessions (connections) served at once; more wait, unaccepted")
	f.IntVar(&workers, "workers", 1, "goroutines that advance one session's episodes in parallel at each step (more only help with processors to spare beside the learner; a pipelined client keeps the server busy instead)")
	f.IntVar(&procs, "procs", defaultProcs(), "processors the server's goroutines may use at once (GOMAXPROCS; 0: every one); the default leaves one to the learner on this machine")
	f.DurationVar(&idle, "idle-timeout", envsock.DefaultIdleTimeout, "close a session that sends no request, or reads none of its replies, for this long (its episodes end)")
	return c
}

// defaultProcs is des serve-socket's --procs: every processor but one,
// which the learner's process (Python, on the same machine) needs. On a
// 2-core machine the Go scheduler's second processor, idle and spinning
// for work, cost the learner more than the episodes gained (docs/python-env.md,
// "Throughput").
func defaultProcs() int { return max(1, runtime.NumCPU()-1) }
