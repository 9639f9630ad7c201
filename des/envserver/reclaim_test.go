package envserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a test clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func tryCreate(c *client) (int, string) {
	code, b := c.do("POST", "/v1/episodes", fmt.Appendf(nil, `{"instance":%q,"paradigm":"centralized","seed":1}`, testInstance))
	var st Status
	json.Unmarshal(b, &st)
	return code, st.ID + string(b)
}

// TestIdleEpisodesAreReclaimed: clients that die without deleting their
// episodes no longer hold the server's slots forever. Once an episode has
// gone untouched for EpisodeIdle, a create that finds the server full
// reclaims it; a touched one is kept.
func TestIdleEpisodesAreReclaimed(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	s, hs := newServer(t, Config{MaxEpisodes: 2, EpisodeIdle: time.Hour, Now: clk.now})
	c := &client{t: t, base: hs.URL}
	a, b := c.create("centralized", 1), c.create("centralized", 2)
	if code, body := tryCreate(c); code != http.StatusTooManyRequests {
		t.Fatalf("a third episode: %d %s, want 429", code, body)
	}
	clk.advance(59 * time.Minute)
	if code, _ := c.do("GET", "/v1/episodes/"+b, nil); code != http.StatusOK { // b's client is alive
		t.Fatalf("status of %s: %d", b, code)
	}
	if code, body := tryCreate(c); code != http.StatusTooManyRequests {
		t.Fatalf("before the idle time: %d %s, want 429", code, body)
	}
	clk.advance(time.Minute)
	code, body := tryCreate(c)
	if code != http.StatusCreated {
		t.Fatalf("after a's idle time: %d %s, want 201", code, body)
	}
	code, msg := c.do("GET", "/v1/episodes/"+a, nil)
	if code != http.StatusNotFound || !strings.Contains(string(msg), "reclaimed") {
		t.Errorf("the reclaimed episode: %d %s", code, msg)
	}
	if code, _ := c.do("GET", "/v1/episodes/"+b, nil); code != http.StatusOK {
		t.Errorf("the touched episode was reclaimed: %d", code)
	}
	s.Close() // the reclaimed run ends; its directory goes
	if _, err := os.Stat(s.cfg.DataDir + "/" + a); !os.IsNotExist(err) {
		t.Errorf("the reclaimed episode's directory is left: %v", err)
	}
}

// TestTimedOutEpisodeFreesItsSlot: a decision timeout means the client
// stopped answering; the episode it closed no longer holds a slot against
// the next client, though no idle time has passed.
func TestTimedOutEpisodeFreesItsSlot(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	_, hs := newServer(t, Config{MaxEpisodes: 1, DecisionTimeout: time.Millisecond, Now: clk.now})
	c := &client{t: t, base: hs.URL}
	id := c.create("centralized", 1)
	for deadline := time.Now().Add(watchdog); ; { // wait for the timeout to close it
		var st Status
		_, b := c.do("GET", "/v1/episodes/"+id, nil)
		json.Unmarshal(b, &st)
		if strings.Contains(st.Reason, "no actions") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decision timeout never closed the episode: %s", b)
		}
		time.Sleep(time.Millisecond)
	}
	if code, body := tryCreate(c); code != http.StatusCreated {
		t.Fatalf("a create after the timeout: %d %s, want 201", code, body)
	}
}

// TestBlankEpisodeID: an error about an empty id says so, never shows a
// blank id.
func TestBlankEpisodeID(t *testing.T) {
	_, hs := newServer(t, Config{})
	c := &client{t: t, base: hs.URL}
	_, b := c.do("POST", "/v1/batch/step", []byte(`{"items":[{"id":""}]}`))
	var resp BatchResponse
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Results) != 1 {
		t.Fatalf("%v %s", err, b)
	}
	if r := resp.Results[0]; r.Code != http.StatusNotFound || !strings.Contains(r.Error, "no episode id given") {
		t.Errorf("got %d %q", r.Code, r.Error)
	}
}
