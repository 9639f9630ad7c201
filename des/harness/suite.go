package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/factory"
	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/opterr"
	"github.com/coordbench/coordbench/internal/seeds"
	"github.com/coordbench/coordbench/suiterun"
)

// A suite is every case instance × paradigm × controller × seed of a set of
// instances, paradigms, controllers and seeds, run into one directory
// (docs/cli.md, "des suite"):
//
//	DIR/suite.json             the configuration (SuiteConfig)
//	DIR/suite_summary.csv      one row per finished case
//	DIR/suite_aggregate.csv    mean and std of each metric per paradigm
//	DIR/suite_aggregate.md     the same as a Markdown table
//	DIR/cases/<case_id>/       the artifacts of RunToDir
//	DIR/failed/<case_id>/      the artifacts of a case whose episode failed, and error.txt

// Suite directory layout.
const (
	FileSuiteConfig      = suiterun.DesConfigFile
	FileSuiteSummary     = suiterun.DesSummaryFile
	FileSuiteAggregate   = "suite_aggregate.csv"
	FileSuiteAggregateMD = "suite_aggregate.md"
	FileCaseError        = suiterun.ErrorFile
	SuiteCasesDir        = suiterun.DesCasesDir
	SuiteFailedDir       = suiterun.FailedDir
	StatusError          = "error" // summary status of a case whose episode failed
)

// SuiteOptions describe a suite: each field is a spec string that
// ResolveSuite parses and checks. A bad value is reported as an
// *opterr.Error naming the field ("Seeds", "Paradigms", ...).
type SuiteOptions struct {
	// Suite lists instances: "A5C12" (A5C12-1, -2, -3), "A3C9" (A3C9-1),
	// "all" (every reported instance), a reported instance name, a file
	// path or a gen:A<n>C<m>[J<k>] spec, or a comma list of these.
	Suite string
	// Paradigms is "all" (the built-in paradigms and those of
	// ParadigmFiles) or a comma list of ids.
	Paradigms string
	// ParadigmFiles are custom paradigms (coord.Paradigms.AddFile): they
	// join the suite's own paradigm set, which Paradigms names ids from,
	// and the suite's paradigms. No other suite sees them.
	ParadigmFiles []string
	// Seeds is "test" or "dev" (each instance's split), seed numbers, or a
	// comma list of these.
	Seeds string
	// Controllers is "builtin" (the first of Builtins, rule for
	// policy.Builtins) or a comma list of names of Builtins and of Makers.
	Controllers string
	// Builtins are the controllers named without a maker
	// (policy.Builtins(); nil: none, every controller needs a maker).
	Builtins Builtins
	// Makers build the controllers that are not built in (an LLM
	// controller, an external process), one per case. Several makers of
	// one name (an LLM controller per model and framework) are crossed
	// with the other dimensions, in the order given: their model parts of
	// case ids (ModelToken) must differ.
	Makers []ControllerMaker
	// Limit keeps only the first Limit cases (0: all).
	Limit int
	// Cases keeps only these case ids.
	Cases []string
	// PlantLimits bound every instance (nil: factory.DefaultSizeLimits).
	PlantLimits *factory.SizeLimits
}

// SuiteConfig is suite.json: the resolved configuration of a suite.
type SuiteConfig struct {
	Tool           string                `json:"tool"`
	Version        string                `json:"version"`
	PayloadVersion string                `json:"payload_version"`
	TraceFormat    string                `json:"trace_format"`
	Suite          string                `json:"suite"`
	Instances      []*SuiteInstance      `json:"instances"`
	Paradigms      []coord.AuthorityMode `json:"paradigms"`
	ParadigmFiles  []string              `json:"paradigm_files,omitempty"`
	Controllers    []string              `json:"controllers"`
	// ControllerIdentities name the non-built-in controllers (the external
	// runner command); a suite directory holds one set of them.
	ControllerIdentities []string `json:"controller_identities,omitempty"`
	Seeds                string   `json:"seeds"`
	Limit                int      `json:"limit,omitempty"`
	OnlyCases            []string `json:"only_cases,omitempty"`
	CaseCount            int      `json:"case_count"`
	// PlantLimits are the plant size limits the suite's instances were
	// admitted under where they differ from factory.DefaultSizeLimits
	// ("cells=2048,jobs=200000"; omitted when none does), so that a
	// resumed suite is admitted under the same (RecordedLimits).
	PlantLimits string `json:"plant_limits,omitempty"`
	// Scorer is the version of the scoring rules of the suite's metrics
	// and summaries (ScorerVersion); absent in suites from before it was
	// recorded. A suite recorded under another version is not resumed:
	// `des rescore` brings it to this one first.
	Scorer string `json:"scorer,omitempty"`
}

// SuiteInstance is one instance of a suite.
type SuiteInstance struct {
	// Ref is the reference as given (name, gen spec or file path).
	Ref string `json:"ref"`
	// Label is the summary's instance column: the reported name, the gen
	// spec, or the name inside an instance file.
	Label string `json:"label"`
	// Name is the resolved instance's name (as in manifest.json).
	Name string `json:"name"`
	// Token is the instance part of case ids (see CaseID).
	Token string `json:"case_token"`
	// SHA256 is the hash of the instance's canonical JSON (instance.json).
	SHA256 string   `json:"instance_sha256"`
	Seeds  []uint64 `json:"seeds"`

	Inst *factory.Instance `json:"-"`
}

// ControllerMaker builds a suite's controllers of one kind that is not
// built in: an LLM controller with its models and framework, or an
// external process.
type ControllerMaker interface {
	// Name is the controller's name in case ids and the summary ("llm").
	Name() string
	// Model names the models behind it ("" for none): the case ids' model
	// part and the summary's model column.
	Model() string
	// Framework names its orchestration framework ("" for none).
	Framework() string
	// New makes the controller of one case.
	New(seed uint64) (coord.Controller, error)
}

// DirControllerMaker is a ControllerMaker whose controllers belong to one
// case: they keep files in the case's directory and must be told when the
// episode ends (an external runner process). Identity names what the
// controllers are (the runner command, say): a suite directory holds the
// results of one identity only.
type DirControllerMaker interface {
	ControllerMaker
	Identity() string
	// NewForCase starts the controller of case c, keeping its files in
	// dir; ctx bounds the controller's life (its process, say).
	NewForCase(ctx context.Context, c Case, dir string) (coord.Controller, error)
	// EndCase runs after the case's artifacts are written in dir; an error
	// (the runner failed) fails the case.
	EndCase(ctrl coord.Controller, dir string) error
}

// Errors of cases rebuilt from their ids (test with errors.Is).
var (
	// ErrNoMaker: the case's controller is not built in, and no maker was
	// given for it (Case.UseMaker).
	ErrNoMaker = errors.New("no maker given for its controller")
	// ErrNoInstanceRef: the case id names an instance file, which only
	// the file itself (CaseFromID's instanceRef) or the suite directory
	// (CaseFromSuiteDir) can give.
	ErrNoInstanceRef = errors.New("the id alone does not give the instance")
)

// Case is one episode of a suite.
type Case struct {
	ID         string
	Instance   *SuiteInstance
	Paradigm   coord.AuthorityMode
	Controller string
	// Model and Framework describe a model-backed controller; empty for
	// built-ins.
	Model     string
	Framework string
	// ReplyParsing is the rule its controller reads model replies under
	// (ReplyParser); empty for controllers without one.
	ReplyParsing string
	Seed         uint64

	maker      ControllerMaker // nil for built-ins
	builtins   Builtins        // where a built-in controller is built
	modelToken string          // a case rebuilt from its id: the id's model part, until UseMaker
	needMaker  bool            // a case rebuilt from its id whose controller is not built in
}

// UseMaker gives a case rebuilt from its id (CaseFromID, CaseFromSuiteDir)
// the maker of its model-backed controller; the maker must be the one the
// id names (same controller, models and framework).
func (c *Case) UseMaker(mk ControllerMaker) error {
	if mk.Name() != c.Controller {
		return fmt.Errorf("case %s: controller %q, not %q", c.ID, c.Controller, mk.Name())
	}
	rule, ruleToken := replyParsing(mk)
	got := ModelToken(mk.Model(), mk.Framework(), ruleToken)
	if got != c.modelToken {
		return fmt.Errorf("case %s was run with model, framework and reply parsing %q; this controller has %q", c.ID, c.modelToken, got)
	}
	c.maker, c.Model, c.Framework, c.ReplyParsing = mk, mk.Model(), mk.Framework(), rule
	return nil
}

// Suite is a resolved suite: its configuration and its cases in order
// (instance, paradigm, controller, seed, each as listed).
type Suite struct {
	Config SuiteConfig
	Cases  []Case
}

// instanceGroups are the SuiteOptions.Suite shorthands besides "all".
var instanceGroups = map[string][]string{
	"A5C12": {"A5C12-1", "A5C12-2", "A5C12-3"},
	"A3C9":  {"A3C9-1"},
}

// ResolveSuite parses and checks every option: each instance is resolved,
// each paradigm looked up, each controller built once and each seed
// parsed, so that a bad spec fails here, before anything runs.
func ResolveSuite(opt SuiteOptions) (*Suite, error) {
	cfg := SuiteConfig{
		Tool: "coordbench", Version: Version(), PayloadVersion: coord.PayloadVersion, TraceFormat: TraceFormat,
		Scorer: ScorerVersion, Suite: opt.Suite, Seeds: opt.Seeds, Limit: opt.Limit, OnlyCases: opt.Cases, ParadigmFiles: opt.ParadigmFiles,
	}
	if opt.Limit < 0 {
		return nil, opterr.New("Limit", "must not be negative (got %d)", opt.Limit)
	}
	var err error
	lim := factory.DefaultSizeLimits()
	if opt.PlantLimits != nil {
		lim = *opt.PlantLimits
	}
	cfg.PlantLimits = ChangedLimits(lim)
	if cfg.Instances, err = resolveInstances(opt.Suite, lim); err != nil {
		return nil, err
	}
	if cfg.Paradigms, err = resolveParadigms(opt.Paradigms, opt.ParadigmFiles); err != nil {
		return nil, err
	}
	if cfg.Controllers, err = resolveControllers(opt.Controllers, opt.Makers, opt.Builtins); err != nil {
		return nil, err
	}
	for _, name := range cfg.Controllers {
		for _, mk := range makersNamed(opt.Makers, name) {
			if dm, ok := mk.(DirControllerMaker); ok {
				cfg.ControllerIdentities = append(cfg.ControllerIdentities, name+": "+dm.Identity())
			}
		}
	}
	for _, si := range cfg.Instances {
		if si.Seeds, err = resolveSeeds(opt.Seeds, si); err != nil {
			return nil, err
		}
	}
	s := &Suite{Config: cfg}
	seen := map[string]int{} // case id → the position of its maker in mks (duplicate seeds give one id twice)
	for _, si := range cfg.Instances {
		for _, m := range cfg.Paradigms {
			for _, ctrl := range cfg.Controllers {
				mks := makersNamed(opt.Makers, ctrl)
				if len(mks) == 0 {
					mks = []ControllerMaker{nil} // built in
				}
				for k, mk := range mks {
					model, fw, rule, ruleToken := "", "", "", ""
					if mk != nil {
						model, fw = mk.Model(), mk.Framework()
						rule, ruleToken = replyParsing(mk)
					}
					for _, seed := range si.Seeds {
						id := CaseID(si.Token, m.ID, ctrl, modelToken(model, fw, ruleToken), seed)
						if prev, ok := seen[id]; ok && prev != k {
							return nil, opterr.New("Controllers", "two %s controllers share the case-id part %q: give their models different names", ctrl, modelToken(model, fw, ruleToken))
						}
						seen[id] = k
						s.Cases = append(s.Cases, Case{
							ID:       id,
							Instance: si, Paradigm: m, Controller: ctrl, Model: model, Framework: fw, ReplyParsing: rule, Seed: seed, maker: mk,
							builtins: opt.Builtins,
						})
					}
				}
			}
		}
	}
	if len(opt.Cases) > 0 {
		want := map[string]bool{}
		for _, id := range opt.Cases {
			want[id] = true
		}
		var kept []Case
		for _, c := range s.Cases {
			if want[c.ID] {
				kept = append(kept, c)
				delete(want, c.ID)
			}
		}
		if len(want) > 0 {
			var missing []string
			for _, id := range opt.Cases {
				if want[id] {
					missing = append(missing, id)
				}
			}
			return nil, opterr.New("Cases", "%s not in this suite (its case ids look like %s)",
				strings.Join(missing, ", "), s.Cases[0].ID)
		}
		s.Cases = kept
	}
	if opt.Limit > 0 && opt.Limit < len(s.Cases) {
		s.Cases = s.Cases[:opt.Limit]
	}
	s.Config.CaseCount = len(s.Cases)
	return s, nil
}

// splitList splits a comma list, trimming blanks and dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func resolveInstances(spec string, lim factory.SizeLimits) ([]*SuiteInstance, error) {
	var refs []string
	for _, item := range splitList(spec) {
		switch {
		case item == "all":
			refs = append(refs, factory.BuiltinNames()...)
		case instanceGroups[item] != nil:
			refs = append(refs, instanceGroups[item]...)
		default:
			refs = append(refs, item)
		}
	}
	if len(refs) == 0 {
		return nil, opterr.New("Suite", "no instance given (want A5C12, A3C9, all, an instance name, a file or gen:A<n>C<m>, or a comma list)")
	}
	var out []*SuiteInstance
	byToken := map[string]*SuiteInstance{}
	for _, ref := range refs {
		si, err := LoadSuiteInstance(ref, lim)
		if err != nil {
			return nil, opterr.Wrap("Suite", err)
		}
		if prev, ok := byToken[si.Token]; ok {
			if prev.SHA256 == si.SHA256 {
				continue // listed twice
			}
			return nil, opterr.New("Suite", "instances %q and %q would share the case-id part %q; give them different names",
				prev.Ref, si.Ref, si.Token)
		}
		byToken[si.Token] = si
		out = append(out, si)
	}
	return out, nil
}

// LoadSuiteInstance resolves one instance reference within lim and
// derives its case-id token and hash.
func LoadSuiteInstance(ref string, lim factory.SizeLimits) (*SuiteInstance, error) {
	in, err := lim.Resolve(ref)
	if err != nil {
		return nil, err
	}
	si := &SuiteInstance{Ref: ref, Name: in.Name, Inst: in}
	switch {
	case strings.HasPrefix(ref, "gen:"):
		si.Label, si.Token = ref, "gen-"+strings.TrimPrefix(ref, "gen:")
	case slices.Contains(factory.BuiltinNames(), ref):
		si.Label, si.Token = ref, ref
	default:
		si.Label, si.Token = in.Name, "file-"+SafeToken(in.Name)
	}
	if !validToken(si.Token) {
		return nil, fmt.Errorf("instance %q: cannot make a case id of it", ref)
	}
	sum := sha256.Sum256(InstanceJSON(in))
	si.SHA256 = hex.EncodeToString(sum[:])
	return si, nil
}

// resolveParadigms adds the paradigms of files to the built-ins, in a set
// of the suite's own, and lists the suite's paradigms: those spec names
// from that set, then those of files.
func resolveParadigms(spec string, files []string) ([]coord.AuthorityMode, error) {
	var set coord.Paradigms
	var fromFiles []coord.AuthorityMode
	for _, f := range files {
		m, err := set.AddFile(f)
		if err != nil {
			return nil, opterr.Wrap("ParadigmFiles", err)
		}
		fromFiles = append(fromFiles, m)
	}
	var out []coord.AuthorityMode
	seen := map[string]bool{}
	add := func(m coord.AuthorityMode) error {
		if seen[m.ID] {
			return nil
		}
		if !validToken(m.ID) {
			return opterr.New("Paradigms", "paradigm id %q cannot be part of a case id: use letters, digits, '.', '-' and single '_' inside", m.ID)
		}
		seen[m.ID] = true
		out = append(out, m)
		return nil
	}
	for _, id := range splitList(spec) {
		if id == "all" {
			for _, m := range set.List() {
				if err := add(m); err != nil {
					return nil, err
				}
			}
			continue
		}
		m, err := set.Lookup(id)
		if err != nil {
			return nil, opterr.Wrap("Paradigms", err)
		}
		if err := add(m); err != nil {
			return nil, err
		}
	}
	for _, m := range fromFiles {
		if err := add(m); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, opterr.New("Paradigms", "no paradigm given (want all or a comma list of: %s)", strings.Join(set.IDs(), ", "))
	}
	return out, nil
}

func resolveControllers(spec string, makers []ControllerMaker, builtins Builtins) ([]string, error) {
	var out []string
	known := builtinNames(builtins)
	for _, name := range splitList(spec) {
		if name == "builtin" {
			if len(known) == 0 {
				return nil, opterr.New("Controllers", "builtin names no controller: no built-in controllers given")
			}
			name = known[0]
		}
		if mk := makerNamed(makers, name); mk != nil {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
			continue
		}
		c, err := newBuiltin(builtins, name, 0)
		if err != nil {
			return nil, opterr.Wrap("Controllers", err)
		}
		if c.Name() != name || !validToken(name) {
			return nil, opterr.New("Controllers", "%q is not a controller name (built-in: %s)", name, strings.Join(known, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, opterr.New("Controllers", "no controller given (want builtin or a comma list of: %s)", strings.Join(known, ", "))
	}
	return out, nil
}

func makerNamed(makers []ControllerMaker, name string) ControllerMaker {
	for _, mk := range makers {
		if mk.Name() == name {
			return mk
		}
	}
	return nil
}

// makersNamed are the makers of controller name, in order.
func makersNamed(makers []ControllerMaker, name string) []ControllerMaker {
	var out []ControllerMaker
	for _, mk := range makers {
		if mk.Name() == name {
			out = append(out, mk)
		}
	}
	return out
}

// ModelToken is the model part of a case id, made safe (SafeToken): the
// model names, framework and reply-parsing token (empty for the default
// rule) of a model-backed controller; "" for none.
func ModelToken(model, framework, replyParsing string) string {
	if t := modelToken(model, framework, replyParsing); t != "" {
		return SafeToken(t)
	}
	return ""
}

// modelToken is the model part of a case id: the models, the framework
// when there is one, and the reply-parsing rule when it is not the
// default ("gpt-5.4-graph", "gpt-5.4-graph-strict").
func modelToken(model, framework, replyParsing string) string {
	t := model
	for _, p := range []string{framework, replyParsing} {
		if t != "" && p != "" {
			t += "-" + p
		}
	}
	return t
}

// replyParsing is mk's reply-parsing rule (none if mk reads no replies)
// and its part of case ids: the rule, unless it is mk's default.
func replyParsing(mk ControllerMaker) (rule, token string) {
	rp, ok := mk.(ReplyParsingMaker)
	if !ok {
		return "", ""
	}
	if rule = rp.ReplyParsing(); rule != rp.DefaultReplyParsing() {
		token = rule
	}
	return rule, token
}

func resolveSeeds(spec string, si *SuiteInstance) ([]uint64, error) {
	out, err := seeds.ParseList(spec, func(w string) ([]uint64, bool) {
		switch w {
		case "test":
			return si.Inst.Seeds.Test, true
		case "dev":
			return si.Inst.Seeds.Dev, true
		}
		return nil, false
	})
	if errors.Is(err, seeds.ErrNone) {
		return nil, opterr.New("Seeds", "%w for instance %s", err, si.Label)
	}
	if err != nil {
		return nil, opterr.New("Seeds", "%w (a list of test, dev, seeds and ranges, e.g. test or 1,2,5 or 1-10)", err)
	}
	return out, nil
}

// Case ids.
//
// A case id is <instance>__<paradigm>__<controller>[__<model>]__s<seed>,
// for example A5C12-1__centralized__rule__s1: the parts are joined by a
// double underscore and none contains one. The instance part is the
// reported name (A5C12-1), gen-<spec> for a generated plant
// (gen:A16C64 → gen-A16C64) or file-<name> for an instance file (its name
// field made safe). The model part is present only for a controller
// backed by a model, made safe the same way. Ids use only letters, digits,
// '.', '-' and '_', so they are valid file names everywhere.

// caseTokenRE is a safe case-id part: no leading, trailing or double '_'.
var caseTokenRE = regexp.MustCompile(`^[A-Za-z0-9.-]+(_[A-Za-z0-9.-]+)*$`)

func validToken(s string) bool { return caseTokenRE.MatchString(s) && s != "." && s != ".." }

// SafeToken maps s to a valid case-id part: characters other than letters,
// digits, '.', '-' and '_' become '-', and so do leading, trailing and
// repeated underscores.
func SafeToken(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
		if c == '_' {
			ok = i > 0 && i < len(b)-1 && b[i-1] != '_'
		}
		if !ok {
			b[i] = '-'
		}
	}
	if out := string(b); validToken(out) {
		return out
	}
	return "x" + string(b) // "", "." or ".."
}

// CaseID builds a case id; model is empty for built-in controllers.
func CaseID(instanceToken, paradigm, controller, model string, seed uint64) string {
	parts := []string{instanceToken, paradigm, controller}
	if model != "" {
		parts = append(parts, SafeToken(model))
	}
	return strings.Join(append(parts, "s"+strconv.FormatUint(seed, 10)), "__")
}

// CaseKey is a parsed case id.
type CaseKey struct {
	InstanceToken, Paradigm, Controller, Model string
	Seed                                       uint64
}

// ParseCaseID splits a case id into its parts.
func ParseCaseID(id string) (CaseKey, error) {
	bad := func(why string) (CaseKey, error) {
		return CaseKey{}, fmt.Errorf("case id %q: %s (want <instance>__<paradigm>__<controller>[__<model>]__s<seed>, e.g. A5C12-1__centralized__rule__s1)", id, why)
	}
	parts := strings.Split(id, "__")
	if len(parts) != 4 && len(parts) != 5 {
		return bad(fmt.Sprintf("%d parts", len(parts)))
	}
	for _, p := range parts {
		if !validToken(p) {
			return bad(fmt.Sprintf("bad part %q", p))
		}
	}
	last := parts[len(parts)-1]
	seed, err := strconv.ParseUint(strings.TrimPrefix(last, "s"), 10, 64)
	if !strings.HasPrefix(last, "s") || err != nil {
		return bad(fmt.Sprintf("last part %q is not s<seed>", last))
	}
	k := CaseKey{InstanceToken: parts[0], Paradigm: parts[1], Controller: parts[2], Seed: seed}
	if len(parts) == 5 {
		k.Model = parts[3]
	}
	return k, nil
}

// InstanceRef turns the instance part of a case id back into an instance
// reference: a reported name or a gen spec. An instance file cannot be
// recovered from its id (ok is false): give the file.
func (k CaseKey) InstanceRef() (ref string, ok bool) {
	if rest, found := strings.CutPrefix(k.InstanceToken, "gen-"); found {
		return "gen:" + rest, true
	}
	if slices.Contains(factory.BuiltinNames(), k.InstanceToken) {
		return k.InstanceToken, true
	}
	return "", false
}

// EpisodeIn builds the episode of c for a run into dir: a controller of a
// DirControllerMaker is started there, for the life of ctx; EndIn must
// follow the run.
func (c Case) EpisodeIn(ctx context.Context, dir string) (Episode, error) {
	dm, ok := c.maker.(DirControllerMaker)
	if !ok {
		return c.Episode()
	}
	ctrl, err := dm.NewForCase(ctx, c, dir)
	if err != nil {
		return Episode{}, err
	}
	return Episode{Plant: factory.Compile(c.Instance.Inst), Seed: c.Seed, Mode: c.Paradigm, Controller: ctrl}, nil
}

// EndIn ends ep's controller after a run into dir (see EpisodeIn).
func (c Case) EndIn(ep Episode, dir string) error {
	if dm, ok := c.maker.(DirControllerMaker); ok {
		return dm.EndCase(ep.Controller, dir)
	}
	return nil
}

// Episode builds the episode of c (artifact writers unset).
func (c Case) Episode() (Episode, error) {
	var ctrl coord.Controller
	var err error
	if c.maker != nil {
		ctrl, err = c.maker.New(c.Seed)
	} else if c.modelToken != "" || c.needMaker {
		return Episode{}, fmt.Errorf("case %s: %w %q", c.ID, ErrNoMaker, c.Controller)
	} else {
		ctrl, err = newBuiltin(c.builtins, c.Controller, c.Seed)
	}
	if err != nil {
		return Episode{}, err
	}
	return Episode{Plant: factory.Compile(c.Instance.Inst), Seed: c.Seed, Mode: c.Paradigm, Controller: ctrl}, nil
}

// CaseFromID rebuilds the case a case id names: the paradigm is looked up
// in paradigms (nil: the built-ins) and the controller among the built-in
// ones.
// instanceRef, if not empty, gives the instance (needed for an instance
// file, whose path the id does not hold); it must match the id. The
// instance must be within lim.
func CaseFromID(id, instanceRef string, paradigms *coord.Paradigms, builtins Builtins, lim factory.SizeLimits) (Case, error) {
	k, err := ParseCaseID(id)
	if err != nil {
		return Case{}, err
	}
	ref := instanceRef
	if ref == "" {
		var ok bool
		if ref, ok = k.InstanceRef(); !ok {
			return Case{}, fmt.Errorf("case id %q: %q is not a reported instance or gen spec: %w", id, k.InstanceToken, ErrNoInstanceRef)
		}
	}
	si, err := LoadSuiteInstance(ref, lim)
	if err != nil {
		return Case{}, err
	}
	if si.Token != k.InstanceToken {
		return Case{}, fmt.Errorf("case id %q names instance %q but %s gives %q", id, k.InstanceToken, ref, si.Token)
	}
	mode, err := paradigms.Lookup(k.Paradigm)
	if err != nil {
		return Case{}, fmt.Errorf("case id %q: %w", id, err)
	}
	if k.Model != "" { // a model-backed controller: UseMaker supplies it
		return Case{ID: id, Instance: si, Paradigm: mode, Controller: k.Controller, Seed: k.Seed, modelToken: k.Model}, nil
	}
	if _, err := newBuiltin(builtins, k.Controller, k.Seed); err != nil { // not built in: UseMaker supplies it
		return Case{ID: id, Instance: si, Paradigm: mode, Controller: k.Controller, Seed: k.Seed, needMaker: true}, nil
	}
	ctrls, err := resolveControllers(k.Controller, nil, builtins)
	if err != nil {
		return Case{}, fmt.Errorf("case id %q: %w", id, err)
	}
	return Case{ID: id, Instance: si, Paradigm: mode, Controller: ctrls[0], Seed: k.Seed, builtins: builtins}, nil
}

// ReadSuiteConfig reads dir/suite.json.
func ReadSuiteConfig(dir string) (*SuiteConfig, error) {
	var cfg SuiteConfig
	if err := atomicfs.ReadJSON(filepath.Join(dir, FileSuiteConfig), &cfg); err != nil {
		return nil, fmt.Errorf("%s is not a suite directory: %w", dir, err)
	}
	return &cfg, nil
}

// ChangedLimits lists the limits of lim that differ from the defaults,
// as SizeLimits.String does ("" for none): SuiteConfig.PlantLimits.
func ChangedLimits(lim factory.SizeLimits) string {
	def := strings.Split(factory.DefaultSizeLimits().String(), ",")
	var out []string
	for i, kv := range strings.Split(lim.String(), ",") {
		if kv != def[i] {
			out = append(out, kv)
		}
	}
	return strings.Join(out, ",")
}

// RecordedLimits are the plant size limits recorded in cfg
// (SuiteConfig.PlantLimits) over the defaults, with raise (the CLI's
// "--plant-limit %s=%d") as their Raise.
func RecordedLimits(cfg *SuiteConfig, raise string) (factory.SizeLimits, error) {
	lim := factory.DefaultSizeLimits()
	lim.Raise = raise
	if cfg.PlantLimits == "" {
		return lim, nil
	}
	for _, kv := range strings.Split(cfg.PlantLimits, ",") {
		if err := lim.Set(kv); err != nil {
			return lim, fmt.Errorf("%s: plant_limits: %w", FileSuiteConfig, err)
		}
	}
	return lim, nil
}

// CaseFromSuiteDir rebuilds a case of the suite in dir from its recorded
// configuration: the paradigm with the switches recorded in suite.json,
// and the instance from its reference, or, when that is gone or has
// changed, from the case's own instance.json; the instance must hash as
// recorded, and within lim.
func CaseFromSuiteDir(dir, id string, builtins Builtins, lim factory.SizeLimits) (Case, error) {
	cfg, err := ReadSuiteConfig(dir)
	if err != nil {
		return Case{}, err
	}
	k, err := ParseCaseID(id)
	if err != nil {
		return Case{}, err
	}
	notIn := func(what string) (Case, error) {
		return Case{}, fmt.Errorf("case %q is not in the suite at %s: %s", id, dir, what)
	}
	var rec *SuiteInstance
	for _, si := range cfg.Instances {
		if si.Token == k.InstanceToken {
			rec = si
		}
	}
	if rec == nil {
		return notIn("no instance " + k.InstanceToken)
	}
	if !slices.Contains(rec.Seeds, k.Seed) {
		return notIn(fmt.Sprintf("no seed %d for %s", k.Seed, rec.Label))
	}
	i := slices.IndexFunc(cfg.Paradigms, func(m coord.AuthorityMode) bool { return m.ID == k.Paradigm })
	if i < 0 {
		return notIn("no paradigm " + k.Paradigm)
	}
	if !slices.Contains(cfg.Controllers, k.Controller) {
		return notIn("no controller " + k.Controller)
	}
	si, err := LoadSuiteInstance(rec.Ref, lim)
	if err != nil || si.SHA256 != rec.SHA256 {
		alt := filepath.Join(dir, SuiteCasesDir, id, FileInstance)
		in, aerr := lim.LoadFile(alt)
		if aerr != nil {
			if err == nil {
				err = fmt.Errorf("instance %s has changed since the suite ran", rec.Ref)
			}
			return Case{}, fmt.Errorf("%w (and %v)", err, aerr)
		}
		si = &SuiteInstance{Ref: alt, Label: rec.Label, Name: in.Name, Token: rec.Token, Inst: in}
		sum := sha256.Sum256(InstanceJSON(in))
		if si.SHA256 = hex.EncodeToString(sum[:]); si.SHA256 != rec.SHA256 {
			return Case{}, fmt.Errorf("instance %s has changed since the suite ran, and so has %s", rec.Ref, alt)
		}
	}
	si.Seeds = rec.Seeds
	_, builtin := newBuiltin(builtins, k.Controller, k.Seed)
	return Case{ID: id, Instance: si, Paradigm: cfg.Paradigms[i], Controller: k.Controller, Seed: k.Seed, modelToken: k.Model,
		needMaker: builtin != nil, builtins: builtins}, nil
}
