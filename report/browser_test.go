package report

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/coordbench/coordbench/internal/testenv"
)

// The report opened in a real browser: headless Chromium (Debian's
// chromium package; .ci/run installs it) driven over the DevTools protocol
// by chromedp. Set COORDBENCH_REPORT_EXAMPLE=1 to also write the page and
// its screenshot to docs/report-example.html and docs/report-example.png.

// chromiumFlags keep Chromium off the network (it would try to reach
// update, sync and safe-browsing servers) and runnable as root in a
// container.
var chromiumFlags = []chromedp.ExecAllocatorOption{
	chromedp.Flag("headless", true),
	chromedp.NoSandbox,
	chromedp.Flag("disable-gpu", true),
	chromedp.Flag("disable-quic", true),
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("disable-dev-shm-usage", true),
	chromedp.WindowSize(1280, 1600),
}

// figureCheck is what the page reports about one figure.
type figureCheck struct {
	ID       string  `json:"id"`
	Declared int     `json:"declared"`
	Series   int     `json:"series"`
	Shapes   int     `json:"shapes"`
	Width    float64 `json:"width"`
	Height   float64 `json:"height"`
	// Visible counts the marks of the series with an area (a bar, a
	// span) or a length (a line); Empty is the figure's data-empty note.
	Visible int    `json:"visible"`
	Empty   string `json:"empty"`
	// Clipped are the texts of the figure drawn partly outside its SVG.
	Clipped []string `json:"clipped"`
}

const figureScript = `(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  return Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
    const svg = f.querySelector('svg');
    const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return {id: f.dataset.figure, declared: +f.dataset.seriesCount,
      series: f.querySelectorAll('svg [data-series]').length,
      shapes: f.querySelectorAll('svg [data-series] > *').length,
      width: r.width, height: r.height,
      visible: Array.from(f.querySelectorAll('svg [data-series] > *')).filter(e => {
        const b = e.getBoundingClientRect();
        return e.tagName === 'rect' ? b.width >= 1 && b.height >= 1 : b.width >= 1 || b.height >= 1;
      }).length,
      empty: f.dataset.empty || '',
      clipped: svg ? Array.from(svg.querySelectorAll('text')).filter(t => {
        const b = t.getBoundingClientRect();
        return t.textContent !== '' && (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1);
      }).map(t => t.textContent) : []};
  });
})()`

// chromiumPath is the browser, or the test's end: fatal in CI, a skip
// elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, "chromium")
}

// visit is what a page did in the browser.
type visit struct {
	problems, requests []string
	figures            []figureCheck
	shot               []byte
	// pwned is window.pwned, which the hostile strings of
	// TestHostileReportInChromium set if they run ("" if none did);
	// text the page's text as a reader sees it (every details open).
	pwned, text string
}

// pageScript reads what a hostile script would have left, and the text.
const pageScript = `[String(window.pwned ?? ""), document.body.innerText]`

// openInChromium opens the file in headless Chromium and records the
// console errors and warnings, uncaught exceptions, browser log errors
// and requests of the page, then its figures and a screenshot. A request
// the page's Content-Security-Policy blocked never left it: it is not
// among the requests.
func openInChromium(t *testing.T, bin, file string) *visit {
	t.Helper()
	v := &visit{}
	var mu sync.Mutex
	urls := map[network.RequestID]string{}
	blocked := map[network.RequestID]bool{}
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert || e.Type == runtime.ConsoleAPICalledTypeWarning {
				v.problems = append(v.problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			v.problems = append(v.problems, "uncaught exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				v.problems = append(v.problems, "browser log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			urls[e.RequestID] = e.Request.URL
		case *network.EventLoadingFailed:
			if e.BlockedReason != "" {
				blocked[e.RequestID] = true
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir())}, chromiumFlags...)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer bcancel()
	url := "file://" + filepath.ToSlash(file)
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s in chromium: %v", url, err)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	figs, err := chromedp.Run(bctx, chromedp.Evaluate[[]figureCheck](figureScript))
	if err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](pageScript))
	if err != nil || len(page) != 2 {
		t.Fatalf("read the page: %v", err)
	}
	// The listener may still run while the browser closes: hand out copies.
	mu.Lock()
	defer mu.Unlock()
	for id, u := range urls {
		if !blocked[id] {
			v.requests = append(v.requests, u)
		}
	}
	slices.Sort(v.requests)
	return &visit{problems: slices.Clone(v.problems), requests: v.requests, figures: figs, shot: shot, pwned: page[0], text: page[1]}
}

// TestBrowserCheckCatchesProblems: the checks of TestReportInChromium see
// what they look for, on a page that does everything the report must not
// (a script error, a console error, a request to a closed loopback port).
func TestBrowserCheckCatchesProblems(t *testing.T) {
	bin := chromiumPath(t)
	file := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><body><figure data-figure="f" data-series-count="2"><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g data-series="a"><rect width="5" height="5"/></g><text x="8" y="9">premature_submission</text></svg></figure>` +
		`<figure data-figure="e" data-series-count="1"><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g data-series="a"><rect width="4" height="0"/></g></svg></figure>` +
		`<img src="http://127.0.0.1:1/x.png"><script>console.error("boom"); undefinedFunction();</script></body></html>`
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	v := openInChromium(t, bin, file)
	joined := strings.Join(v.problems, "\n")
	for _, want := range []string{"console error", "uncaught exception"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q among the problems seen: %q", want, v.problems)
		}
	}
	if !slices.Contains(v.requests, "http://127.0.0.1:1/x.png") {
		t.Errorf("the image request was not seen: %q", v.requests)
	}
	if len(v.figures) != 2 || v.figures[0].Series != 1 || v.figures[0].Declared != 2 {
		t.Fatalf("figures %+v, want two, the first with 1 series drawn of 2 declared", v.figures)
	}
	if !slices.Equal(v.figures[0].Clipped, []string{"premature_submission"}) || v.figures[0].Visible != 1 {
		t.Errorf("figure f: clipped %q, visible %d; want the label cut and one visible bar", v.figures[0].Clipped, v.figures[0].Visible)
	}
	if v.figures[1].Visible != 0 || v.figures[1].Empty != "" {
		t.Errorf("figure e: visible %d, note %q; want nothing visible and no note", v.figures[1].Visible, v.figures[1].Empty)
	}
}

func TestReportInChromium(t *testing.T) {
	bin := chromiumPath(t)
	docs, err := filepath.Abs(filepath.Join("..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	des, silo := suites(t)
	// The page names its inputs as given: build it from relative names,
	// as a user would (and as the checked-in example shows).
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"a3c9": des, "silo": silo} {
		if err := os.Symlink(target, filepath.Join(root, "runs", name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	html := htmlPage(t, []string{"runs/a3c9", "runs/silo"}, Options{})
	file := filepath.Join(root, "report.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.ToSlash(file)
	v := openInChromium(t, bin, file)
	problems, requests, figs, shot := v.problems, v.requests, v.figures, v.shot
	if err := os.WriteFile(filepath.Join(t.TempDir(), "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("the page logged a problem: %s", p)
	}
	for _, r := range requests {
		if r != url {
			t.Errorf("the page requested %s (only the file itself may be loaded)", r)
		}
	}
	if len(requests) == 0 {
		t.Error("no request seen: the network listener did not work")
	}
	byID := map[string]figureCheck{}
	for _, f := range figs {
		byID[f.ID] = f
		if f.Series != f.Declared || f.Width <= 0 || f.Height <= 0 {
			t.Errorf("figure %s: %d series drawn (declared %d), %v × %v px", f.ID, f.Series, f.Declared, f.Width, f.Height)
		}
		if f.Visible == 0 && f.Empty == "" {
			t.Errorf("figure %s: nothing visible drawn in its series, and no note says why", f.ID)
		}
		for _, c := range f.Clipped {
			t.Errorf("figure %s: the label %q is cut at the figure's edge", f.ID, c)
		}
	}
	if len(figs) != strings.Count(html, "<figure ") {
		t.Errorf("the browser found %d figures, the page has %d", len(figs), strings.Count(html, "<figure "))
	}
	for id, n := range expectedFigures() {
		if f, ok := byID[id]; !ok || f.Series != n {
			t.Errorf("figure %s: %d series in the browser, want %d", id, f.Series, n)
		}
	}
	if os.Getenv("COORDBENCH_REPORT_EXAMPLE") != "" {
		if err := os.WriteFile(filepath.Join(docs, "report-example.html"), []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, "report-example.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/report-example.html (%d bytes) and docs/report-example.png (%d bytes)", len(html), len(shot))
	}
}
