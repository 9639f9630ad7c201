package jetstream

import (
	"crypto/rand"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/coordbench/coordbench/internal/opterr"
)

// The users of an embedded server that requires credentials (ServerConfig
// Auth): the coordinator, which may do anything, and the workers, which
// may only do what a worker does (workerPermissions).
const (
	UserServe  = "coordbench-serve"
	UserWorker = "coordbench-worker"
	// TokenEnv is the environment variable that holds the workers' token
	// (the worker user's password), for sweep serve (a token it is given
	// rather than one it generates) and coordbench worker.
	TokenEnv = "COORDBENCH_SWEEP_TOKEN"
	// MinTokenLen bounds a token from below.
	MinTokenLen = 16
	// maxTokenLen bounds a token from above (it travels in CONNECT).
	maxTokenLen = 256
	// WorkerInboxPrefix starts the reply subjects of a worker's
	// connection (WorkerConnect): the only ones a worker may subscribe to
	// besides the control subject, so that no worker reads the replies
	// the coordinator gets (its results consumer's deliveries, say).
	WorkerInboxPrefix = "_INBOX_CBW"
)

// Credentials are the passwords of the two users.
type Credentials struct {
	// Worker is the workers' token: given to sweep serve in TokenEnv, or
	// generated and printed once.
	Worker string
	// Serve is the coordinator's password: random, in its process only.
	Serve string
}

// NewCredentials returns the credentials of a server whose workers
// present token ("": a random one is generated).
func NewCredentials(token string) (*Credentials, error) {
	if token == "" {
		token = rand.Text()
	}
	c := &Credentials{Worker: token, Serve: rand.Text()}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Credentials) check() error {
	if err := CheckToken(c.Worker); err != nil {
		return err
	}
	if len(c.Serve) < MinTokenLen {
		return opterr.New("auth", "the coordinator's password is shorter than %d characters", MinTokenLen)
	}
	return nil
}

// CheckToken refuses a token too short to guess at or too long to send.
// Its errors are *opterr.Error values of option "token".
func CheckToken(token string) error {
	if len(token) < MinTokenLen || len(token) > maxTokenLen {
		return opterr.New("token", "a token of %d characters: want %d to %d", len(token), MinTokenLen, maxTokenLen)
	}
	for _, r := range token {
		if r <= ' ' || r == 0x7f || r > 0x7e {
			return opterr.New("token", "want printable ASCII characters, no spaces")
		}
	}
	return nil
}

// ServeConnect are the options of the coordinator's own connection.
func (c *Credentials) ServeConnect() nats.Option { return nats.UserInfo(UserServe, c.Serve) }

// WorkerConnect are the options of a worker's connection: its token, if
// any, as the worker user's password, and the reply subjects workers may
// subscribe to.
func WorkerConnect(token string) []nats.Option {
	o := []nats.Option{nats.CustomInboxPrefix(WorkerInboxPrefix)}
	if token != "" {
		o = append(o, nats.UserInfo(UserWorker, token))
	}
	return o
}

// workerPermissions are what the worker user may do on the server of
// experiment n: read the experiment, pull and acknowledge its cases,
// store them (the object store and its claims, when serve chose it),
// publish results and events, ask for permits, and hear the
// coordinator's control messages. It may not publish control messages
// or cases, write the experiment, create, change or delete streams and
// consumers, read the results or dead-letter streams, nor read the
// replies sent to other connections than workers'.
//
// Workers share one user, so they are not told apart: what one worker
// may do, another may too (acknowledge a case delivered to another, say).
// Permits are the exception: a lease is a random id only its holder
// knows (PermitServer).
func workerPermissions(n names) *server.Permissions {
	const api = "$JS.API."
	pub := []string{
		n.resultSubject(), n.eventSubject(), n.permitSubject("*"),
		api + "CONSUMER.INFO." + n.caseStream() + "." + ConsumerName,
		api + "CONSUMER.MSG.NEXT." + n.caseStream() + "." + ConsumerName,
		"$JS.ACK." + n.caseStream() + "." + ConsumerName + ".>",
	}
	// Read-only streams: the experiments bucket. Read-write: the object
	// store and its claims (a worker deletes the object of a run that
	// lost the claim, which purges the object's chunks).
	read := func(stream string) []string {
		return []string{api + "STREAM.INFO." + stream, api + "STREAM.MSG.GET." + stream,
			api + "DIRECT.GET." + stream, api + "DIRECT.GET." + stream + ".>"}
	}
	pub = append(pub, read("KV_"+Bucket)...)
	pub = append(pub, read("OBJ_"+n.objectBucket())...)
	pub = append(pub, api+"STREAM.PURGE.OBJ_"+n.objectBucket(), "$O."+n.objectBucket()+".>")
	pub = append(pub, read("KV_"+n.claimBucket())...)
	pub = append(pub, "$KV."+n.claimBucket()+".>")
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: []string{WorkerInboxPrefix + ".>", n.controlSubject()}},
	}
}
