//go:build unix

package extctl_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a scripted runner: with EXTCTL_HELPER set it
// plays the runner protocol with a fault (helperCommand builds the command
// line).
func TestMain(m *testing.M) {
	if spec := os.Getenv("EXTCTL_HELPER"); spec != "" {
		os.Exit(helper(spec))
	}
	os.Exit(m.Run())
}

// helperCommand is the shell command of a scripted runner: "first" (the
// first legal option for every agent, echoing the step), or a fault
// "name:N" at decision step N (see helper).
func helperCommand(t testing.TB, spec string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "EXTCTL_HELPER=" + shellQuote(spec) + " exec " + shellQuote(exe)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// helper is the scripted runner. Faults, at step N where it takes one:
//
//	nohello       exit 3 before reading anything
//	noready       read hello, never answer
//	badready      answer hello with {"type":"hullo"}
//	crash:N       exit 2 instead of answering
//	hang:N        never answer (SIGTERM stops it)
//	noterm:N      never answer, ignore SIGTERM (SIGKILL stops it)
//	garbage:N     answer "{not json"
//	wrong:N       answer for cell:C99 only
//	missing:N     answer {"actions":{}}
//	illegal:N     answer 99 for every agent
//	notint:N      answer "0" (a string) for every agent
//	noise         print a non-JSON line and a blank line before every answer
//	stale         send every answer twice
//	nostep        never echo the step
//	badexit       exit 1 after episode_end
//	linger        keep running after episode_end
//	orphan        start a grandchild (sleep) and leave it behind
//	slow:MS       sleep MS milliseconds before every answer
func helper(spec string) int {
	name, arg, _ := strings.Cut(spec, ":")
	n, _ := strconv.Atoi(arg)
	fmt.Fprintf(os.Stderr, "helper pid %d mode %s\n", os.Getpid(), spec)
	switch name {
	case "nohello":
		fmt.Fprintln(os.Stderr, "helper: giving up before hello")
		return 3
	case "noterm":
		signal.Ignore(syscall.SIGTERM)
	case "orphan":
		gc := exec.Command("sleep", "300")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 4
		}
		fmt.Fprintf(os.Stderr, "grandchild pid %d\n", gc.Process.Pid)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		out.WriteString(s)
		out.WriteByte('\n')
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var msg struct {
			Type    string `json:"type"`
			Payload *struct {
				Step         int `json:"step"`
				ActiveAgents map[string]struct {
					LegalActions []int `json:"legal_actions"`
				} `json:"active_agents"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			fmt.Fprintln(os.Stderr, "helper: bad message:", err)
			return 5
		}
		switch msg.Type {
		case "hello":
			switch name {
			case "noready":
				continue
			case "badready":
				send(`{"type":"hullo"}`)
			default:
				send(`{"type":"ready","name":"helper","framework":"scripted","model":"none"}`)
			}
		case "decision":
			d := msg.Payload
			acts := map[string]any{}
			for id, v := range d.ActiveAgents {
				acts[id] = v.LegalActions[0]
			}
			if d.Step == n {
				switch name {
				case "crash":
					fmt.Fprintf(os.Stderr, "helper: crashing at step %d\n", n)
					return 2
				case "hang", "noterm":
					time.Sleep(time.Hour)
				case "garbage":
					send("{not json")
					continue
				case "wrong":
					send(`{"actions":{"cell:C99":0}}`)
					continue
				case "missing":
					send(`{"actions":{}}`)
					continue
				case "illegal", "notint":
					for id := range acts {
						acts[id] = map[string]any{"illegal": 99, "notint": "0"}[name]
					}
				}
			}
			switch name {
			case "noise":
				send(fmt.Sprintf("debug: step %d, %d agents", d.Step, len(acts)))
				send("")
			case "slow":
				time.Sleep(time.Duration(n) * time.Millisecond)
			}
			r := map[string]any{"step": d.Step, "actions": acts}
			if name == "nostep" {
				delete(r, "step")
			}
			b, _ := json.Marshal(r)
			send(string(b))
			if name == "stale" {
				send(string(b))
			}
		case "episode_end":
			switch name {
			case "badexit":
				fmt.Fprintln(os.Stderr, "helper: failing at the end")
				return 1
			case "linger":
				time.Sleep(time.Hour)
			}
			return 0
		}
	}
}

// pidsIn finds "<label> pid N" in a runner's stderr.
func pidIn(t *testing.T, stderr, label string) int {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, label+" pid "); ok {
			f := strings.Fields(rest)
			if pid, err := strconv.Atoi(f[0]); err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no %q pid in stderr:\n%s", label, stderr)
	return 0
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		if _, perr := os.Stat("/proc/self/stat"); perr == nil {
			return false // there is a /proc, and pid is not in it
		}
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// waitDead waits a little for pid to disappear (a grandchild is reaped by
// init, asynchronously).
func waitDead(pid int) bool {
	for i := 0; i < 100; i++ {
		if !alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
