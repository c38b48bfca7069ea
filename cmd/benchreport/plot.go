package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plots, one pair of PNG files per storage directory (label):
//
//	bench-bandwidth-<label>.png  a panel per workload: grouped bars of the
//	                             median MiB/s of every implementation, for
//	                             write and for read
//	bench-breakdown-<label>.png  a row per workload, write and read: the
//	                             collio variants' phases stacked (plan,
//	                             request exchange, shuffle, write/read not
//	                             hidden behind the exchange, read-modify-
//	                             write), median seconds of the slowest rank
//
// Colors: collio variants in blues, greens and purples, host MPI-IO
// variants in reds, oranges and browns, the same in every panel.

var (
	collioPalette = []color.RGBA{
		{31, 119, 180, 255}, {44, 160, 44, 255}, {23, 190, 207, 255}, {148, 103, 189, 255},
		{0, 61, 122, 255}, {152, 223, 138, 255}, {174, 199, 232, 255}, {98, 60, 140, 255}, {0, 128, 128, 255},
	}
	hostPalette = []color.RGBA{
		{214, 39, 40, 255}, {255, 127, 14, 255}, {140, 86, 75, 255}, {227, 119, 194, 255},
		{188, 189, 34, 255}, {255, 187, 120, 255}, {127, 127, 127, 255}, {255, 152, 150, 255}, {196, 156, 148, 255},
	}
	phasePalette = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255}}
	phaseNames   = []string{"plan", "request exchange", "shuffle", "write/read not hidden", "read-modify-write"}
)

// implColors gives every implementation of the report its color.
func implColors(rep benchReport) map[string]color.Color {
	colors := map[string]color.Color{}
	nc, nh := 0, 0
	for _, s := range rep.Sections {
		for _, t := range s.Ops {
			for _, r := range t.Rows {
				if _, ok := colors[r.Impl]; ok {
					continue
				}
				if r.Kind == "collio" {
					colors[r.Impl] = collioPalette[nc%len(collioPalette)]
					nc++
				} else {
					colors[r.Impl] = hostPalette[nh%len(hostPalette)]
					nh++
				}
			}
		}
	}
	return colors
}

// storages lists the storage labels of the report in order.
func storages(rep benchReport) []string {
	var out []string
	for _, s := range rep.Sections {
		out = addUnique(out, storageName(s))
	}
	return out
}

// fileLabel makes a label safe in a file name.
func fileLabel(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// workloadTitle names a section in a panel: the workload, with its case
// when the report has several cases of that workload.
func workloadTitle(rep benchReport, s section) string {
	n := 0
	for _, w := range rep.Params.Workloads {
		if w.Name == s.Workload {
			n++
		}
	}
	if n > 1 && s.Case != "" {
		c := s.Case
		if len(c) > 28 {
			c = c[:28] + "…"
		}
		return s.Workload + ": " + c
	}
	return s.Workload
}

// writePlots writes the PNG files into dir and returns their names.
func writePlots(rep benchReport, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	colors := implColors(rep)
	var names []string
	for _, st := range storages(rep) {
		var secs []section
		for _, s := range rep.Sections {
			if storageName(s) == st {
				secs = append(secs, s)
			}
		}
		name := "bench-bandwidth-" + fileLabel(st) + ".png"
		if err := bandwidthPlot(rep, st, secs, colors, filepath.Join(dir, name)); err != nil {
			return names, err
		}
		names = append(names, name)
		name = "bench-breakdown-" + fileLabel(st) + ".png"
		ok, err := breakdownPlot(rep, st, secs, filepath.Join(dir, name))
		if err != nil {
			return names, err
		}
		if ok {
			names = append(names, name)
		}
	}
	return names, nil
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p
}

// bandwidthPlot: a panel per workload, two groups (write, read), a bar
// per implementation.
func bandwidthPlot(rep benchReport, st string, secs []section, colors map[string]color.Color, path string) error {
	impls := allImpls(rep)
	const cols = 3
	const tileW, tileH = 400, 260 // points
	// The two groups (write, read) sit at x = 0 and 1 of an x range of
	// 2.2; a group's bars fill 80% of a unit of the data width (the tile
	// less about 60 points of axis).
	nPanels := len(secs) + 1 // + the legend
	rows := (nPanels + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	legend := newPlot("implementations (" + st + ")")
	legend.HideAxes()
	legend.Legend.Top, legend.Legend.Left = true, true
	inLegend := map[string]bool{}
	for i, s := range secs {
		p := newPlot(workloadTitle(rep, s))
		p.Y.Label.Text = "median MiB/s"
		p.Y.Min = 0
		var present []string
		for _, im := range impls {
			if rowOf(s, "write", im) != nil || rowOf(s, "read", im) != nil {
				present = append(present, im)
			}
		}
		unit := (tileW - 60) / 2.2
		width := vg.Points(math.Max(1, math.Min(18, 0.8*unit/float64(max(1, len(present))))))
		for j, im := range present {
			vals := plotter.Values{0, 0}
			for k, op := range []string{"write", "read"} {
				if r := rowOf(s, op, im); r != nil {
					vals[k] = r.Median
				}
			}
			bc, err := plotter.NewBarChart(vals, width)
			if err != nil {
				return err
			}
			bc.Color = colors[im]
			bc.LineStyle.Width = 0
			bc.Offset = width * vg.Length(float64(j)-float64(len(present)-1)/2)
			p.Add(bc)
			if !inLegend[im] {
				inLegend[im] = true
				legend.Legend.Add(im, bc)
			}
		}
		p.NominalX("write", "read")
		p.X.Min, p.X.Max = -0.6, 1.6
		grid[i/cols][i%cols] = p
	}
	grid[len(secs)/cols][len(secs)%cols] = legend
	return savePNG(grid, vg.Length(cols)*tileW, vg.Length(rows)*tileH, path)
}

// breakdownPlot: a row per workload, write and read side by side, the
// collio variants' phases stacked. It reports false when no collio
// variant ran on this storage.
func breakdownPlot(rep benchReport, st string, secs []section, path string) (bool, error) {
	var grid [][]*plot.Plot
	for _, s := range secs {
		var panels []*plot.Plot
		for _, op := range []string{"write", "read"} {
			var rows []row
			for _, t := range s.Ops {
				if t.Op != op {
					continue
				}
				for _, r := range t.Rows {
					if r.Collio != nil {
						rows = append(rows, r)
					}
				}
			}
			if len(rows) == 0 {
				panels = append(panels, nil)
				continue
			}
			p := newPlot(fmt.Sprintf("%s %s (%s)", workloadTitle(rep, s), op, st))
			p.Y.Label.Text = "seconds (slowest rank)"
			p.Y.Min = 0
			names := make([]string, len(rows))
			phases := make([]plotter.Values, len(phaseNames))
			for i := range phases {
				phases[i] = make(plotter.Values, len(rows))
			}
			for j, r := range rows {
				names[j] = shortImpl(r.Impl)
				c := r.Collio
				ioWait := c.IOWait
				if ioWait == 0 && c.IO+c.RMW > 0 {
					ioWait = c.IO + c.RMW // older JSON: no overlap information
				}
				rmw := math.Min(c.RMW, ioWait)
				for i, v := range []float64{c.Plan, c.Exchange, c.Shuffle, ioWait - rmw, rmw} {
					phases[i][j] = math.Max(0, v)
				}
			}
			top := 0.0
			for j := range rows {
				sum := 0.0
				for i := range phases {
					sum += phases[i][j]
				}
				top = max(top, sum)
			}
			if top > 0 {
				p.Y.Max = 1.45 * top // room for the legend above the bars
			}
			width := vg.Points(math.Max(6, math.Min(28, 200/float64(len(rows)))))
			var below *plotter.BarChart
			for i, vals := range phases {
				bc, err := plotter.NewBarChart(vals, width)
				if err != nil {
					return false, err
				}
				bc.Color = phasePalette[i]
				bc.LineStyle.Width = 0
				if below != nil {
					bc.StackOn(below)
				}
				below = bc
				p.Add(bc)
				p.Legend.Add(phaseNames[i], bc)
			}
			p.Legend.Top = true
			p.Legend.TextStyle.Font.Size = vg.Points(7)
			p.NominalX(names...)
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
			panels = append(panels, p)
		}
		if countNil(panels) < len(panels) {
			grid = append(grid, panels)
		}
	}
	if len(grid) == 0 {
		return false, nil
	}
	return true, savePNG(grid, 2*380, vg.Length(len(grid))*230, path)
}

func countNil(ps []*plot.Plot) int {
	n := 0
	for _, p := range ps {
		if p == nil {
			n++
		}
	}
	return n
}

// shortImpl shortens a collio variant's name for an axis: collio+X → X,
// collio → auto.
func shortImpl(impl string) string {
	if impl == "collio" {
		return "auto"
	}
	return strings.TrimPrefix(impl, "collio+")
}

func rowOf(s section, op, impl string) *row {
	for _, t := range s.Ops {
		if t.Op != op {
			continue
		}
		for i := range t.Rows {
			if t.Rows[i].Impl == impl {
				return &t.Rows[i]
			}
		}
	}
	return nil
}

// savePNG lays the plots out in a grid (nil tiles stay empty) and writes
// a PNG of w×h points.
func savePNG(grid [][]*plot.Plot, w, h vg.Length, path string) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	t := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, t, dc)
	for j := range grid {
		for i, p := range grid[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
