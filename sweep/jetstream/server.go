package jetstream

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/coordbench/coordbench/internal/opterr"
)

// Embedded is a nats-server with JetStream run inside the coordinator.
type Embedded struct {
	srv *server.Server
}

// Limits of the embedded server's client connections: the counterparts
// of the limits internal/httplimit puts on the project's HTTP listeners.
const (
	// DefaultMaxConns bounds the client connections open at once.
	DefaultMaxConns = 1024
	// authTimeout bounds the wait for a client's CONNECT (its
	// credentials): nothing it sends before is acted on.
	authTimeout = 2 * time.Second
	// writeDeadline bounds a write to a client that does not read.
	writeDeadline = 10 * time.Second
)

// ServerConfig configures an embedded server (StartServer).
type ServerConfig struct {
	// Listen is host:port (port 0 picks a free one).
	Listen string
	// StoreDir keeps the streams.
	StoreDir string
	// Auth, if set, is required of every client: the coordinator's user
	// may do anything, the workers' only what a worker of experiment
	// Experiment does (workerPermissions). Without it any client that
	// reaches the port may read and write every stream.
	Auth *Credentials
	// Experiment is the id of the experiment served (required with Auth).
	Experiment string
	// Open allows a Listen other than LoopbackListen without Auth.
	Open bool
	// MaxConns bounds the connections open at once (0: DefaultMaxConns).
	MaxConns int
}

// Validate refuses a config that cannot be served, or that would open
// an unauthenticated server on another address than LoopbackListen
// without saying so (Open).
// Its errors are *opterr.Error values of options "listen" and "auth".
func (c *ServerConfig) Validate() error {
	_, ps, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return opterr.New("listen", "%q: want host:port, e.g. 127.0.0.1:4222", c.Listen)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return opterr.New("listen", "%q: want a port from 0 to 65535", c.Listen)
	}
	if c.MaxConns < 0 {
		return opterr.New("listen", "a bound of %d connections: want at least 1", c.MaxConns)
	}
	if c.Auth != nil {
		if err := c.Auth.check(); err != nil {
			return err
		}
		if _, err := namesOf(c.Experiment); err != nil {
			return opterr.New("auth", "credentials are per experiment: %w", err)
		}
	} else if !c.Open && !LoopbackListen(c.Listen) {
		return opterr.New("auth", "%s is not 127.0.0.1, ::1 or localhost: a server others may reach requires credentials (or say it may be open)", c.Listen)
	}
	return nil
}

// LoopbackListen reports whether the host of the address listen
// (host:port) is the loopback address a server binds by default:
// localhost, 127.0.0.1 or ::1. Any other address, another loopback one
// included (127.0.0.2, which a container or a port forward may expose),
// is taken for one others may reach. A malformed address is not
// loopback.
func LoopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)))
}

// loopbackHost reports whether host is localhost or a loopback IP.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// StartEmbedded starts an embedded server on a loopback listen address
// without credentials (StartServer).
func StartEmbedded(listen, storeDir string) (*Embedded, error) {
	return StartServer(ServerConfig{Listen: listen, StoreDir: storeDir})
}

// StartServer starts a nats-server with JetStream as cfg says.
func StartServer(cfg ServerConfig) (*Embedded, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, ps, _ := net.SplitHostPort(cfg.Listen)
	port, _ := strconv.Atoi(ps)
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	opts := &server.Options{
		ServerName:    "coordbench-sweep",
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      cfg.StoreDir,
		MaxPayload:    2 * MaxSpecSize, // the spec, in the key-value bucket
		MaxConn:       cfg.MaxConns,
		AuthTimeout:   authTimeout.Seconds(),
		WriteDeadline: writeDeadline,
		NoSigs:        true,
		NoLog:         true,
		HTTPPort:      0,
	}
	if cfg.Auth != nil {
		n, _ := namesOf(cfg.Experiment)
		opts.Users = []*server.User{
			{Username: UserServe, Password: cfg.Auth.Serve},
			{Username: UserWorker, Password: cfg.Auth.Worker, Permissions: workerPermissions(n)},
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("nats-server: not ready after 30s (is the port in use?)")
	}
	return &Embedded{srv: srv}, nil
}

// URL is the server's client URL, e.g. nats://127.0.0.1:4222.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Close shuts the server down and waits until it has.
func (e *Embedded) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
