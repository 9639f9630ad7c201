package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/des/envserver"
	"github.com/coordbench/coordbench/des/policy"
)

func desServeCmd() *cobra.Command {
	var addr, data, tokenEnv string
	var keep, allowRemote bool
	var maxEpisodes, maxConns, maxBatch int
	var maxBody int64
	var decisionTimeout, longPoll, bodyTimeout, writeTimeout, episodeIdle time.Duration
	var artifactBudget int64
	var limits *plantLimits
	var files []string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Host episodes over HTTP (an environment server)",
		Long: `Host many concurrent episodes over an HTTP/JSON API: create an episode
(instance, paradigm, seed), poll its pending decision payload, post one
action index per active agent, read the metrics and artifacts, delete it.
POST /v1/batch/{create,step,delete} act on up to --max-batch episodes in
one request (vectorized environments; python/coordbench_env uses them).
See docs/http-server.md, docs/openapi.yaml and docs/python-env.md.

The server binds to loopback only unless --allow-remote. With --token-env
VAR, every request must carry "Authorization: Bearer $VAR"; a request
without it is refused from its headers, its body unread. Headers must
arrive within 10s, a body within --body-timeout; at most --max-connections
connections are open at once, and a response write that makes no progress
for --write-timeout closes its connection. Instances are reported ones or
gen: specs within the server's plant limits (well below the CLI's; raise
them with --plant-limit), which clients cannot raise. Each episode's
streamed artifacts are bounded by --artifact-budget; an episode that
spends it is stopped. DELETE and shutdown (SIGINT, SIGTERM) stop running
episodes before their next decision (status interrupted). Episodes name
a built-in paradigm or one of --paradigm-file. A create with "play" lists
the agents its client plays; the built-in controller "others" (default
rule) answers the rest inside the server. A create that finds
--max-episodes held first reclaims abandoned episodes: those no request
touched for --episode-idle, and those a decision timeout closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkServeAddr(addr, allowRemote); err != nil {
				return err
			}
			paradigms, err := paradigmSet(files)
			if err != nil {
				return err
			}
			var token string
			if tokenEnv != "" {
				token = os.Getenv(tokenEnv)
				if token == "" {
					return fmt.Errorf("--token-env %s: the variable is empty or unset", tokenEnv)
				}
			}
			if data == "" {
				d, err := os.MkdirTemp("", "coordbench-serve-")
				if err != nil {
					return err
				}
				data = d
				if !keep {
					defer os.RemoveAll(d)
				}
			}
			srv, err := envserver.New(envserver.Config{DataDir: data, Keep: keep, Token: token, MaxEpisodes: maxEpisodes,
				MaxBody: maxBody, DecisionTimeout: decisionTimeout, LongPoll: longPoll, BodyTimeout: bodyTimeout, MaxConns: maxConns, MaxBatch: maxBatch,
				EpisodeIdle: episodeIdle, WriteTimeout: writeTimeout, PlantLimits: &limits.lim, ArtifactBudget: artifactBudget,
				Paradigms: paradigms, Builtins: policy.Builtins()})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			hs := srv.HTTPServer()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			auth := "no token"
			if token != "" {
				auth = "bearer token from $" + tokenEnv
			}
			fmt.Fprintf(cmd.OutOrStdout(), "coordbench environment server on http://%s (%s; data %s)\n", ln.Addr(), auth, data)
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(srv.Listener(ln)) }()
			select {
			case err := <-errc:
				srv.Close()
				return err
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Close() // closes the episodes: long polls and waits end
			if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "server stopped")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8765", "listen address (loopback only unless --allow-remote)")
	f.StringVar(&data, "data", "", "directory for the episodes' artifacts (default: a temporary directory)")
	f.BoolVar(&keep, "keep", false, "keep episode directories after DELETE and at exit")
	f.StringVar(&tokenEnv, "token-env", "", "require the bearer token held in this environment variable")
	f.BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback listen address")
	f.IntVar(&maxEpisodes, "max-episodes", envserver.DefaultMaxEpisodes, "episodes held at once (running or not yet deleted)")
	f.Int64Var(&maxBody, "max-body", envserver.DefaultMaxBody, "maximum request body, in bytes")
	f.DurationVar(&decisionTimeout, "decision-timeout", envserver.DefaultDecisionTimeout, "wait for each decision's actions; then the episode is closed and falls back")
	f.DurationVar(&episodeIdle, "episode-idle", envserver.DefaultEpisodeIdle, "when the server is full, a create reclaims episodes no request touched for this long (and those a decision timeout closed)")
	f.DurationVar(&longPoll, "long-poll", envserver.DefaultLongPoll, "longest wait of GET .../decision?wait=1")
	f.DurationVar(&bodyTimeout, "body-timeout", envserver.DefaultBodyTimeout, "time a client has to send a request body, after its headers")
	f.DurationVar(&writeTimeout, "write-timeout", envserver.DefaultWriteTimeout, "a response write that makes no progress this long (a client that stopped reading) closes its connection")
	f.Int64Var(&artifactBudget, "artifact-budget", envserver.DefaultArtifactBudget, "bytes an episode's trace, decisions, messages and timing may take together; an episode that needs more is stopped")
	limits = addPlantLimitsFrom(f, envserver.ServerPlantLimits())
	f.IntVar(&maxConns, "max-connections", envserver.DefaultMaxConns, "connections open at once; more wait, unaccepted")
	f.IntVar(&maxBatch, "max-batch", envserver.DefaultMaxBatch, "items of one POST /v1/batch/* request (vectorized environments)")
	f.StringArrayVar(&files, "paradigm-file", nil, "also serve a custom paradigm from a YAML file (repeatable); episodes name it by its mode_id")
	return c
}

// checkServeAddr refuses a non-loopback address unless allowed.
func checkServeAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address; pass --allow-remote to serve other hosts (and set --token-env)", addr)
}
