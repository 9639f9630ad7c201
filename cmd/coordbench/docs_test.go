package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docFiles are the user docs whose examples must keep working.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "../../README.md")
}

// invocation matches the start of a coordbench command line in a shell
// block: the binary, ./coordbench, or go run ./cmd/coordbench.
var invocation = regexp.MustCompile(`(?:^|[\s;&|(])(?:go run \./cmd/coordbench|\./coordbench|coordbench)\s+([a-z].*)$`)

// docCommands returns each documented coordbench command line (file:line
// and its arguments), from the shell blocks of the docs, continuation
// lines joined.
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inBlock, shell := false, false
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				lang := strings.TrimPrefix(strings.TrimSpace(l), "```")
				inBlock = !inBlock
				shell = inBlock && (lang == "" || lang == "sh" || lang == "bash" || lang == "console" || lang == "shell")
				continue
			}
			if !shell {
				continue
			}
			start := i
			for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
				i++
				l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
			}
			l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
			m := invocation.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			out[fmt.Sprintf("%s:%d", filepath.Base(f), start+1)] = shellWords(m[1])
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for our docs:
// quotes group, and the words end at a comment or a shell operator.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case !inWord && (c == '#' || c == '|' || c == '&' || c == ';' || c == '>' || c == '<' || c == ')'):
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestDocCommandsParse: every coordbench command in the README and the
// docs names an existing command and only flags it has, with values its
// flags accept, so that renaming a flag or a command without the docs
// fails here.
func TestDocCommandsParse(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 50 {
		t.Fatalf("found only %d documented commands", len(cmds))
	}
	t.Logf("%d documented commands", len(cmds))
	for where, args := range cmds {
		root := rootCmd()
		c, rest, err := root.Find(args)
		if err != nil || c == root {
			t.Errorf("%s: coordbench %s: no such command (%v)", where, strings.Join(args, " "), err)
			continue
		}
		if c.HasSubCommands() && !c.Runnable() {
			t.Errorf("%s: coordbench %s: %q needs a subcommand", where, strings.Join(args, " "), c.CommandPath())
			continue
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: coordbench %s: %v", where, strings.Join(args, " "), err)
		}
	}
}

// TestCLIReferenceListsEveryFlag: docs/cli.md names every command and
// every flag of the command tree.
func TestCLIReferenceListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "coordbench ")
		if c.Runnable() && c.Parent() != nil && !strings.Contains(doc, path) {
			missing = append(missing, "command "+path)
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `([^-\w]|$)`).MatchString(doc) {
				missing = append(missing, path+" --"+f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(rootCmd())
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("docs/cli.md does not name %d commands or flags:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}
