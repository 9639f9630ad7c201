package llm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/llm/stubmodel"
)

func Example() {
	srv := stubmodel.NewServer(stubmodel.Echo) // a fake OpenAI-compatible server on 127.0.0.1
	defer srv.Close()

	c, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "demo", MaxTokens: 256})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Complete(context.Background(), []llm.Message{
		{Role: llm.RoleSystem, Content: "Answer briefly."},
		{Role: llm.RoleUser, Content: "hello there"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content)
	fmt.Println(resp.Usage, "in", resp.Attempts, "attempt")
	// Output:
	// echo: hello there
	// 4 prompt + 3 completion tokens in 1 attempt
}

func ExampleCache() {
	dir, _ := os.MkdirTemp("", "llm-example")
	defer os.RemoveAll(dir)
	cache, _ := llm.OpenCache(filepath.Join(dir, "llm.db"))
	defer cache.Close()
	srv := stubmodel.NewServer(stubmodel.Echo)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "plan"}}

	// Record: read-write stores every new response.
	rec, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "demo", Cache: cache, CacheMode: llm.CacheReadWrite})
	first, _ := rec.Complete(context.Background(), msgs)
	srv.Close()

	// Replay: answers from the cache only; the server is gone.
	rep, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "demo", Cache: cache, CacheMode: llm.CacheReplay})
	again, _ := rep.Complete(context.Background(), msgs)
	fmt.Println(first.Content, first.Cached)
	fmt.Println(again.Content, again.Cached, again.Usage == first.Usage)
	_, err := rep.Complete(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "new question"}})
	fmt.Println(err != nil)
	// Output:
	// echo: plan false
	// echo: plan true true
	// true
}
