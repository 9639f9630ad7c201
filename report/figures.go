package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/internal/untrusted"
)

// Figures for papers: every figure of the HTML page on its own, as a
// standalone SVG file (the page's drawing, byte for byte inside the <svg>
// element, with the font the page gives it) and a LaTeX caption stub.
// There is no PDF: no maintained pure-Go library turns these SVGs into
// PDF (go-pdf/fpdf's SVG support draws paths without text; a PDF drawn
// with its own API would be a second renderer to keep in step), so
// docs/report.md says how to convert them (rsvg-convert, Inkscape).

// figTmpPrefix names the temporary files of an atomic write.
const figTmpPrefix = ".tmp-"

// WriteFigures writes each figure of the HTML page that Write would build
// from dirs with opt into the directory out, which must exist:
// fig-ID.svg and fig-ID.tex (\caption and \label) per figure, ID the
// figure's id on the page. It returns the names written, in page order.
func WriteFigures(out string, dirs []string, opt Options) ([]string, error) {
	p, err := buildPage(dirs, opt)
	if err != nil {
		return nil, err
	}
	var figs []Figure
	var walk func(bs []*block)
	walk = func(bs []*block) {
		for _, b := range bs {
			figs = append(figs, b.Figures...)
			walk(b.Children)
		}
	}
	walk(p.Blocks)
	var names []string
	for _, f := range figs {
		name := "fig-" + fileSafe(f.ID)
		svg := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
			strings.Replace(untrusted.Printable(string(f.SVG)), "<svg ", `<svg font-family="sans-serif" `, 1) + "\n"
		if err := atomicfs.WriteFile(filepath.Join(out, name+".svg"), figTmpPrefix, []byte(svg)); err != nil {
			return nil, err
		}
		if err := atomicfs.WriteFile(filepath.Join(out, name+".tex"), figTmpPrefix, []byte(captionStub(name, f))); err != nil {
			return nil, err
		}
		names = append(names, name+".svg", name+".tex")
	}
	return names, nil
}

// captionStub is the LaTeX of a figure: the graphic (the SVG converted
// to PDF beside it), its caption and a label.
func captionStub(name string, f Figure) string {
	caption := untrusted.LaTeX(oneLine(f.Title))
	if f.Caption != "" {
		caption += ". " + untrusted.LaTeX(oneLine(f.Caption))
	}
	return fmt.Sprintf("%% coordbench report --figures: %s.svg; convert it to %s.pdf (docs/report.md)\n"+
		"\\begin{figure}\n  \\centering\n  \\includegraphics[width=\\linewidth]{%s}\n  \\caption{%s}\n  \\label{fig:%s}\n\\end{figure}\n",
		name, name, name, caption, name)
}

// fileSafe keeps letters, digits, '-' and '_' of a figure id (ids are
// built from such characters; anything else becomes '_').
func fileSafe(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, id)
}
