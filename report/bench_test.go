package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/harness"
	"github.com/coordbench/coordbench/silo/suite"
)

// largeSuites writes a synthetic des suite and a synthetic silo suite of
// thousands of cases into root (des: 4 instances × 4 paradigms × 2
// controllers × seeds): their summaries in full, and for the des
// cases the page shows by default the artifacts of one real case.
func largeSuites(tb testing.TB, root string, seeds int) (string, string) {
	tb.Helper()
	realDES, realSilo := suites(tb)
	des, silo := filepath.Join(root, "des"), filepath.Join(root, "silo")
	instances := []string{"A5C12-1", "A5C12-2", "A5C12-3", "A3C9-1"}
	paradigms := []string{"centralized", "hierarchical", "heterarchical_cnp", "holonic_hybrid"}
	controllers := []string{"rule", "greedy"}
	cfg := map[string]any{"controllers": controllers}
	var inst, para []map[string]string
	for _, i := range instances {
		inst = append(inst, map[string]string{"label": i})
	}
	for _, p := range paradigms {
		para = append(para, map[string]string{"mode_id": p})
	}
	cfg["instances"], cfg["paradigms"] = inst, para
	mustMkdir(tb, filepath.Join(des, "cases"))
	b, _ := json.Marshal(cfg)
	mustWrite(tb, filepath.Join(des, harness.FileSuiteConfig), b)
	var sum strings.Builder
	sum.WriteString("case_id,instance,paradigm,controller,model,framework,seed,status")
	for _, m := range harness.SuiteMetrics() {
		sum.WriteString("," + m.Key)
	}
	sum.WriteString("\n")
	one := filepath.Join(realDES, "cases", "A3C9-1__centralized__rule__s1")
	k := 0
	for _, i := range instances {
		for _, c := range controllers {
			for _, p := range paradigms {
				for s := 1; s <= seeds; s++ {
					id := fmt.Sprintf("%s__%s__%s__s%d", i, p, c, s)
					fmt.Fprintf(&sum, "%s,%s,%s,%s,,,%d,done", id, i, p, c, s)
					for mi := range harness.SuiteMetrics() {
						fmt.Fprintf(&sum, ",%g", float64((k*7+mi*13+s*s)%997)/7)
					}
					sum.WriteString("\n")
					if s == 1 {
						copyDir(tb, one, filepath.Join(des, "cases", id))
					}
					k++
				}
			}
		}
	}
	mustWrite(tb, filepath.Join(des, harness.FileSuiteSummary), []byte(sum.String()))

	// Silo: 3 levels × 6 N × 3 protocols × 2 agents × 10 tasks × 5 seeds = 5400 runs.
	mustMkdir(tb, filepath.Join(silo, "runs"))
	mustWrite(tb, filepath.Join(silo, "silo_suite.json"), []byte("{}"))
	head, err := os.ReadFile(filepath.Join(realSilo, suite.FileSummary))
	if err != nil {
		tb.Fatal(err)
	}
	cols := strings.Split(strings.SplitN(string(head), "\n", 2)[0], ",")
	var runs, agg strings.Builder
	runs.WriteString(strings.Join(cols, ",") + "\n")
	agg.WriteString("agent,level,N,merged_from,protocol,runs,S_mean,success_rate,P_mean,P_paper_mean,D_mean,D_reads_mean,RCC,RCC_success,rcc_baseline\n")
	k = 0
	for _, lvl := range []string{"I", "II", "III"} {
		for _, n := range []int{2, 5, 10, 20, 50, 100} {
			for _, p := range []string{"p2p", "broadcast", "sfs"} {
				for _, a := range []string{"reference", "tree"} {
					for task := 1; task <= 10; task++ {
						for s := 1; s <= 5; s++ {
							v := map[string]string{"case_id": fmt.Sprintf("%s-%02d__n%d__%s__%s__seeded-s%d", lvl, task, n, p, a, s),
								"task": fmt.Sprintf("%s-%02d", lvl, task), "level": lvl, "N": fmt.Sprint(n), "protocol": p, "agent": a,
								"seed": fmt.Sprint(s), "success": fmt.Sprint(k%3 == 0)}
							for _, c := range cols {
								if _, ok := v[c]; !ok {
									v[c] = fmt.Sprint((k * 31 % 17) % 2)
								}
							}
							var row []string
							for _, c := range cols {
								row = append(row, v[c])
							}
							runs.WriteString(strings.Join(row, ",") + "\n")
							k++
						}
					}
					fmt.Fprintf(&agg, "%s,%s,%d,,%s,50,0.5,0.3,0.6,0.6,0.4,,0.1,0.2,merged\n", a, lvl, n, p)
				}
			}
		}
	}
	mustWrite(tb, filepath.Join(silo, suite.FileSummary), []byte(runs.String()))
	mustWrite(tb, filepath.Join(silo, suite.FileAggregate), []byte(agg.String()))
	return des, silo
}

func mustMkdir(tb testing.TB, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
}

func mustWrite(tb testing.TB, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func copyDir(tb testing.TB, from, to string) {
	mustMkdir(tb, to)
	es, err := os.ReadDir(from)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		mustWrite(tb, filepath.Join(to, e.Name()), b)
	}
}

// BenchmarkReportLargeSuites builds the HTML report of a des suite of
// 4800 cases (150 seeds) and a silo suite of 5400 runs (per-case detail for the
// default selection) and reports its size.
func BenchmarkReportLargeSuites(b *testing.B) {
	des, silo := largeSuites(b, b.TempDir(), 150)
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := Write(&buf, []string{des, silo}, Options{Format: "html"}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "bytes/report")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/report")
}

// TestLargeSuiteReportStaysSmall: thousands of cases (320 des, 5400 silo)
// give a page of the same order of size as a small suite, since per-case detail is only for
// the default selection.
func TestLargeSuiteReportStaysSmall(t *testing.T) {
	des, silo := largeSuites(t, t.TempDir(), 10)
	var buf bytes.Buffer
	if err := Write(&buf, []string{des, silo}, Options{Format: "html"}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 2<<20 {
		t.Errorf("the report of 5720 cases is %d bytes, want < 2 MiB", buf.Len())
	}
	if !strings.Contains(buf.String(), "the other 312 are left out") || !strings.Contains(buf.String(), "the other 5392 are left out") {
		t.Error("the page does not say how many cases it left out")
	}
}
