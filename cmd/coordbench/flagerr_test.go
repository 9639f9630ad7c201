package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/llm"
	"github.com/coordbench/coordbench/report"
)

// The library's errors reach the user naming flags, not options.
func TestErrorsNameFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "suite", "--limit", "-1"}, "--limit: must not be negative (got -1)"},
		{[]string{"des", "suite", "--seeds", "validation"}, `--seeds: "validation" is not a seed`},
		{[]string{"des", "suite", "--paradigm", ""}, "--paradigm: no paradigm given"},
		{[]string{"des", "suite", "--controller", "rule,oracle"}, `--controller: unknown controller "oracle"`},
		{[]string{"des", "case", "--case-id", "file-mine__centralized__rule__s1"}, "give the instance file (--instance FILE) or the suite directory (--suite-dir DIR)"},
		{[]string{"silo", "suite", "--mode", "official", "--agents", "3"}, "--agents: official instances exist for N in [2 5 10 20 50 100], not 3; seeded ones for any N (see --mode)"},
		{[]string{"silo", "suite", "--seeds", "5-2"}, `--seeds: "5-2" is not a seed range: want lo-hi with lo ≤ hi, e.g. 1-10`},
		{[]string{"silo", "suite", "--levels", "IV"}, `--levels: unknown level "IV"`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "ftp://h/v1"}, `llm: config: --llm-base-url: scheme "ftp"`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "http://u:p@h/v1"}, "(see --llm-api-key-env)"},
		{[]string{"silo", "suite", "--agent", "llm", "--llm-model", "m", "--llm-base-url", "http://h/v1", "--llm-cache-mode", "replay"}, `llm: config: --llm-cache: cache mode "replay" needs a cache`},
		// Go-internal texts replaced by what to do (issue 14).
		{[]string{"des", "run", "--seed", "-1"}, `invalid argument "-1" for "--seed" flag: "-1" is not a seed: seeds are whole numbers from 0 to 18446744073709551615`},
		{[]string{"silo", "run", "--seed", "-1"}, `"-1" is not a seed: seeds are whole numbers`},
		{[]string{"des", "suite", "--seeds", "1,-1"}, `--seeds: "-1" is not a seed: seeds are whole numbers`},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "127.0.0.1:8089/v1"}, "--llm-base-url: no scheme: give the API root with http:// or https:// in front, e.g. http://127.0.0.1:8000/v1"},
		{[]string{"des", "run", "--controller", "llm", "--llm-model", "m", "--llm-base-url", "localhost:8089/v1"}, "--llm-base-url: no scheme"},
		{[]string{"silo", "run", "--agents", "0"}, "--agents: task I-01: 0 agents, want 1 … 1000"},
		{[]string{"silo", "run", "--mode", "official", "--agents", "3"}, "--agents: official instances exist for N in [2 5 10 20 50 100], not 3; seeded ones for any N (see --mode)"},
		{[]string{"silo", "run", "--max-rounds", "0"}, "--max-rounds must be at least 1 (got 0)"},
		{[]string{"silo", "suite", "--max-rounds", "0"}, "--max-rounds must be at least 1 (got 0)"},
		// Model flags without a model controller are refused in both benchmarks.
		{[]string{"des", "run", "--llm-model", "m"}, "--llm-model/--llm-base-url given, but --controller is not llm"},
		{[]string{"des", "suite", "--llm-model", "m", "--controller", "rule"}, "--llm-model/--llm-base-url given, but --controller does not include llm"},
		{[]string{"des", "case", "--case-id", "A3C9-1__centralized__rule__s1", "--llm-base-url", "http://h/v1"}, "--llm-model/--llm-base-url given, but case A3C9-1__centralized__rule__s1's controller is rule"},
		{[]string{"silo", "run", "--llm-model", "m"}, "--llm-model/--llm-base-url given, but --agent does not include llm"},
		// report, sweep and the distributed sweep name their options too.
		{[]string{"report", "--format", "md", "--compare", "a"}, "--compare: want exactly two suite directories, A and B (got 1)"},
		{[]string{"report", "--format", "md", "--cases", "all", "a"}, "--cases: only the HTML report has per-case sections (see --format)"},
		{[]string{"report", "--format", "html", "--table", "matrix", "a"}, "--table: only md, csv and latex output have tables to choose; the HTML page holds them all (see --format)"},
		{[]string{"report", "--format", "pdf", "a"}, `--format: unknown format "pdf"`},
		{[]string{"sweep", "run", "exp.yaml", "--shard", "1/x"}, `--shard: "1/x": want i/N`},
		{[]string{"sweep", "serve", "../../examples/experiments/des-small.yaml", "--listen", "nowhere"}, `--listen: "nowhere": want host:port`},
	} {
		_, err := run(t, append(tc.args, "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to say %q", tc.args, err, tc.want)
		}
	}
}

func TestInFlagTerms(t *testing.T) {
	var lf siloLLMFlags
	silo := pflag.NewFlagSet("silo", pflag.ContinueOnError)
	lf.register(silo)
	silo.String("seeds", "1", "")
	var df llmFlags
	des := pflag.NewFlagSet("des", pflag.ContinueOnError)
	df.register(des)

	notFound := &llm.Error{Method: "POST", Endpoint: "http://h/v1/chat/completions", Model: "m", Status: 404,
		Hint: "check the base URL", See: []string{"BaseURL", "Model"}}
	overflow := &llm.Error{Method: "POST", Endpoint: "http://h/v1/chat/completions", Model: "m", Status: 400,
		Hint: "the prompt does not fit", ContextOverflow: true}
	miss := &llm.CacheMissError{Key: "k", Endpoint: "http://h/v1", Model: "m", Messages: 2}
	for _, tc := range []struct {
		fs       *pflag.FlagSet
		err      error
		want     string
		sentinel error
	}{
		{silo, fmt.Errorf("agent 1: %w", notFound), "check the base URL (see --llm-base-url, --llm-model)", nil},
		{silo, fmt.Errorf("%w (see ContextBudget)", overflow), "the prompt does not fit (see --context-budget)", llm.ErrContextOverflow},
		{des, fmt.Errorf("%w (see ContextBudget)", overflow), "the prompt does not fit", llm.ErrContextOverflow}, // des has no --context-budget: no see-list
		{silo, fmt.Errorf("turn 2: %w", miss), "no request was sent; cache mode read-write fills the cache (see --llm-cache-mode)", llm.ErrCacheMiss},
		{des, fmt.Errorf("case x: %w", harness.ErrNoMaker), "case x: no maker given for its controller", harness.ErrNoMaker}, // des here has no --controller-command
		{silo, opterr.New("Seeds", "bad"), "--seeds: bad", nil},
		{silo, opterr.New("Unheard", "bad"), "Unheard: bad", nil}, // no flag: the option keeps its name
	} {
		got := inFlagTerms(terms{fs: tc.fs}, tc.err)
		if got.Error() != tc.want && !strings.HasSuffix(got.Error(), tc.want) {
			t.Errorf("%v: %q, want it to end in %q", tc.err, got, tc.want)
		}
		if tc.sentinel != nil && !errors.Is(got, tc.sentinel) {
			t.Errorf("%v: %v is no longer %v", tc.err, got, tc.sentinel)
		}
		var oe *opterr.Error
		if errors.As(tc.err, &oe) && !errors.As(got, &oe) {
			t.Errorf("%v: %v lost the option error", tc.err, got)
		}
	}
	// Options of report, silo analyze and the distributed sweep, in the
	// terms of the commands that set them.
	for _, tc := range []struct {
		cmd  *cobra.Command
		err  error
		want string
	}{
		{reportCmd(), fmt.Errorf("runs/x: %w", report.ErrRunDir), "runs/x: a run directory has figures, not tables: its page is in the HTML report; write it with --format html (or --out FILE.html)"},
		{siloAnalyzeCmd(), opterr.New("MaxRuns", "d/runs: more than 5 runs: raise it"), "--max-runs: d/runs: more than 5 runs: raise it"},
		{sweepCollectCmd(), opterr.New("out", "d is not empty"), "--out: d is not empty"},
		{workerCmd(), opterr.New("Dir", "d holds experiment x"), "--out: d holds experiment x"},
		{sweepServeCmd(), fmt.Errorf("failed c: no such case directory: give workers the same shared directory, or store cases as objects%s", opterr.SeeText([]string{"Dir", "Store"})),
			"failed c: no such case directory: give workers the same shared directory, or store cases as objects (see --out, --store)"},
	} {
		if got := inFlagTerms(termsOf(tc.cmd), tc.err); got.Error() != tc.want {
			t.Errorf("%s: %q, want %q", tc.cmd.Name(), got, tc.want)
		}
	}
	if inFlagTerms(terms{fs: silo}, nil) != nil {
		t.Error("nil is an error")
	}
	// Errors recorded as text (an agent's) name flags too.
	if got, want := (terms{fs: silo}).see("agent 0: x (see BaseURL) y (see Seed, Nope) z (see Nope)"), "agent 0: x (see --llm-base-url) y (see --llm-seed) z"; got != want {
		t.Errorf("text: %q, want %q", got, want)
	}
}

// flagRE matches a command-line flag in a text: "--out", "(--format html".
var flagRE = regexp.MustCompile("(?:^|[\\s(\"'`])--[a-z][a-z0-9-]*")

// commandRE matches a whole command line a text quotes for the user to
// run ("try a stub: coordbench llm stub --policy silo-gather"), up to the
// end of its parenthesis or quotes: its flags are that command's, not
// options of the library.
var commandRE = regexp.MustCompile("coordbench [^()\"'`]*")

// errorTexts returns the string literals of a Go source that make error
// texts, with their positions: those inside a call of fmt.Errorf,
// errors.New or opterr.New/Wrap, inside a composite literal of a type
// named *Error (opterr.Error, sweep.Error), and constants (a message part
// such as sweep's "fix").
func errorTexts(fset *token.FileSet, f *ast.File) map[token.Position]string {
	out := map[token.Position]string{}
	collect := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
				if s, err := strconv.Unquote(l.Value); err == nil {
					out[fset.Position(l.Pos())] = s
				}
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok {
					switch pkg.Name + "." + sel.Sel.Name {
					case "fmt.Errorf", "errors.New", "opterr.New", "opterr.Wrap":
						collect(n)
						return false
					}
				}
			}
		case *ast.CompositeLit:
			name := ""
			switch t := n.Type.(type) {
			case *ast.Ident:
				name = t.Name
			case *ast.SelectorExpr:
				name = t.Sel.Name
			}
			if strings.HasSuffix(name, "Error") {
				collect(n)
				return false
			}
		case *ast.GenDecl:
			if n.Tok == token.CONST {
				collect(n)
				return false
			}
		}
		return true
	})
	return out
}

// flagsInErrors returns "file:line: text" for each error text of the Go
// source src that names a command-line flag.
func flagsInErrors(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name == "main" {
		return nil // a program's own flags
	}
	var out []string
	for pos, s := range errorTexts(fset, f) {
		if flagRE.MatchString(commandRE.ReplaceAllString(s, "")) {
			out = append(out, fmt.Sprintf("%s:%d: %q", pos.Filename, pos.Line, s))
		}
	}
	slices.Sort(out)
	return out
}

// The libraries speak of their options in their own terms (opterr); only
// the CLI names flags (flagerr.go). No error text of a library package
// names a flag.
func TestLibraryErrorsNameNoFlags(t *testing.T) {
	// The scan finds what it must, and only that.
	probe := []byte("package p\n\nconst fix = \"rerun with --force\"\n\n" +
		"func f() error { _ = fmt.Sprintf(\"--cases all\"); return fmt.Errorf(\"%s: give --out DIR\", x) }\n\n" +
		"func g() error { return &opterr.Error{Option: \"Seeds\", Err: errors.New(\"(see --seeds)\")} }\n" +
		"func h() error { return errors.New(\"no model (try a stub: coordbench llm stub --policy p)\") }\n")
	if got := flagsInErrors(t, "probe.go", probe); len(got) != 3 {
		t.Fatalf("the scan of a probe found %q, want its 3 flags in error texts", got)
	}
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, path); rel == "cmd" || rel != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, f := range flagsInErrors(t, path, src) {
			t.Errorf("%s: a library error names a flag; name the option (opterr) and map it in flagerr.go", f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned %d library files: the walk missed the tree", files)
	}
}
