package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/policy"
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

// cliSection is a heading of docs/cli.md with its text up to the next
// heading of the same or a higher level.
type cliSection struct {
	heading string
	level   int // 2 for ##, 3 for ###
	text    string
	parent  *cliSection
}

// cliSections splits docs/cli.md at its ## and ### headings (outside code
// blocks).
func cliSections(doc string) []*cliSection {
	var out []*cliSection
	var cur, h2 *cliSection
	inBlock := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
		}
		level := 0
		if !inBlock && strings.HasPrefix(l, "## ") {
			level = 2
		} else if !inBlock && strings.HasPrefix(l, "### ") {
			level = 3
		}
		if level > 0 {
			cur = &cliSection{heading: strings.TrimSpace(strings.TrimLeft(l, "#")), level: level}
			if level == 2 {
				h2 = cur
			} else {
				cur.parent = h2
			}
			out = append(out, cur)
			continue
		}
		if cur != nil {
			cur.text += l + "\n"
		}
	}
	return out
}

// mentions reports whether text names the command path as words
// ("des run", not "des runner" nor "sweep des run").
func mentions(text, path string) bool {
	return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(path) + `([^\w-]|$)`).MatchString(text)
}

// namesFlag reports whether text names the flag --name.
func namesFlag(text, name string) bool {
	return regexp.MustCompile(`--` + regexp.QuoteMeta(name) + `([^-\w]|$)`).MatchString(text)
}

// TestCLIReferenceListsEveryFlag: docs/cli.md has a section for every
// command (a heading naming "coordbench <command>"), and lists each of the
// command's flags where a reader of that command looks: in its own
// section, in the section above it (the flags `silo run` "takes above"),
// or in a section of shared flags that names the command (the model flags
// of "des run and des suite", the runner flags of External controllers). A
// flag named only in another command's section (des bench --paradigm in
// des run's) does not count.
func TestCLIReferenceListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := cliSections(string(b))
	if len(sections) < 20 {
		t.Fatalf("docs/cli.md: found only %d sections", len(sections))
	}
	var missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "coordbench ")
		var own []*cliSection
		for _, s := range sections {
			if mentions(s.heading, "coordbench "+path) {
				own = append(own, s)
				if s.parent != nil {
					own = append(own, s.parent)
				}
			}
		}
		if c.Runnable() && c.Parent() != nil && len(own) == 0 {
			missing = append(missing, "command "+path+" (no heading names `coordbench "+path+"`)")
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			for _, s := range own {
				if namesFlag(s.text, f.Name) {
					return
				}
			}
			for _, s := range sections {
				if !mentions(s.heading, "coordbench") && mentions(s.text, path) && namesFlag(s.text, f.Name) {
					return
				}
			}
			missing = append(missing, path+" --"+f.Name)
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(rootCmd())
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("docs/cli.md does not list %d commands or flags in their own section:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// TestCLIReferenceNamesEveryController: the --controller rows of des run
// and des suite in docs/cli.md name every built-in controller.
func TestCLIReferenceNamesEveryController(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"des run", "des suite"} {
		row := ""
		for _, s := range cliSections(string(b)) {
			if !mentions(s.heading, "coordbench "+cmd) {
				continue
			}
			for _, l := range strings.Split(s.text, "\n") {
				if strings.HasPrefix(l, "| `--controller` |") {
					row = l
				}
			}
		}
		if row == "" {
			t.Errorf("docs/cli.md: no --controller row in the section of %s", cmd)
			continue
		}
		for _, name := range policy.Names() {
			if !strings.Contains(row, "`"+name+"`") {
				t.Errorf("docs/cli.md, %s: the --controller row does not name the built-in controller %q: %s", cmd, name, row)
			}
		}
	}
}
