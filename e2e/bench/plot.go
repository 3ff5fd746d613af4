package bench

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// lineColors are the launchers' colors in the plots.
var lineColors = map[string]color.Color{
	KindSparkplug:    color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	KindController:   color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	KindPlain:        color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	KindSidecarWF:    color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	KindControllerWF: color.RGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	KindPlainWF:      color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	KindOperator:     color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
}

// dashed are the one-step-workflow launchers, drawn dashed in their loop
// counterpart's color.
var dashed = map[string]bool{KindSidecarWF: true, KindControllerWF: true, KindPlainWF: true}

// Plot draws pods created over time for the results of one N, at Argo's
// defaults, into a PNG at path.
func Plot(path string, n int, results []Result) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("N = %d: driver pods (pods) created since submission", n)
	p.X.Label.Text = "seconds since the workflow(s) (the SparkApplications) were submitted"
	p.Y.Label.Text = "pods created"
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false
	p.Y.Min, p.X.Min = 0, 0
	for _, r := range Sorted(results) {
		if r.N != n || len(r.Created) == 0 || r.Argo != "" {
			continue // the plots are of Argo's defaults
		}
		pts := make(plotter.XYs, 0, len(r.Created)+1)
		pts = append(pts, plotter.XY{X: 0, Y: 0})
		for i, d := range r.Created {
			pts = append(pts, plotter.XY{X: d.Seconds(), Y: float64(i + 1)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = lineColors[r.Kind]
		line.Width = vg.Points(2)
		if dashed[r.Kind] {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(describe[r.Kind], line)
	}
	p.Legend.ThumbnailWidth = vg.Points(20)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.YPosition = draw.PosBottom
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}
