package report

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var pageFigureRe = regexp.MustCompile(`<figure data-figure="([^"]+)"[^>]*><div class="t">[^<]*</div>(<svg .*?</svg>)`)

// TestWriteFigures: every figure of the page is written on its own, its
// SVG the page's drawing and well-formed XML, with a caption stub naming
// it; the same inputs give the same bytes.
func TestWriteFigures(t *testing.T) {
	des, silo := suites(t)
	page := htmlPage(t, []string{des, silo}, Options{})
	onPage := pageFigureRe.FindAllStringSubmatch(page, -1)
	if len(onPage) == 0 || len(onPage) != strings.Count(page, "<figure ") {
		t.Fatalf("%d figures matched of the page's %d", len(onPage), strings.Count(page, "<figure "))
	}
	out, again := t.TempDir(), t.TempDir()
	names, err := WriteFigures(out, []string{des, silo}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFigures(again, []string{des, silo}, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2*len(onPage) {
		t.Errorf("%d files for %d figures", len(names), len(onPage))
	}
	for _, m := range onPage {
		name := "fig-" + m[1]
		b, err := os.ReadFile(filepath.Join(out, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		svg := strings.Replace(string(b), `<svg font-family="sans-serif" `, "<svg ", 1)
		if !strings.Contains(svg, m[2]) {
			t.Errorf("%s.svg is not the page's drawing", name)
		}
		d := xml.NewDecoder(strings.NewReader(string(b)))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s.svg: not well-formed XML: %v", name, err)
				break
			}
		}
		tex, err := os.ReadFile(filepath.Join(out, name+".tex"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`\caption{`, `\label{fig:` + name + `}`, `\includegraphics[width=\linewidth]{` + name + `}`} {
			if !strings.Contains(string(tex), want) {
				t.Errorf("%s.tex lacks %s:\n%s", name, want, tex)
			}
		}
		if b2, _ := os.ReadFile(filepath.Join(again, name+".svg")); string(b2) != string(b) {
			t.Errorf("%s.svg differs between two writes", name)
		}
	}
}
