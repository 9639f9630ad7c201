package envcore

import "github.com/coordbench/coordbench/des/factory"

// AreaLayout is one area and its cells.
type AreaLayout struct {
	Area  string   `json:"area"`
	Cells []string `json:"cells"`
}

// Layout is the plant's areas and cells, in instance order (the order of
// the plant observation's areas and of an area's cells).
func Layout(p *factory.Plant) []AreaLayout {
	out := make([]AreaLayout, len(p.Areas))
	for i, a := range p.Areas {
		out[i].Area = a.ID
		for _, c := range a.Cells {
			out[i].Cells = append(out[i].Cells, p.Cells[c].ID)
		}
	}
	return out
}
