package bench

import (
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkPlots checks that each named plot exists as a PNG that decodes to
// a picture of a readable size and as an SVG that parses, and that the
// SVG's text has axis labels and a legend naming each of legend.
func checkPlots(t *testing.T, dir string, names, legend []string) {
	t.Helper()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", n, err)
		} else if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
			t.Errorf("%s.png is %dx%d", n, b.Dx(), b.Dy())
		}
		texts := svgTexts(t, filepath.Join(dir, n+".svg"))
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, "clients") && !strings.Contains(all, "variant") {
			t.Errorf("%s.svg has no x-axis label (clients or variant) among %q", n, texts)
		}
		if !containsAny(all, "tps", "latency", "ratio", "per transaction", "share", "(s)", "pages", "waits") {
			t.Errorf("%s.svg has no y-axis label among %q", n, texts)
		}
		if strings.HasPrefix(n, "w") && n != "wait_events" && n != "w" {
			continue
		}
		if n == "w" || n == "wait_events" {
			if !containsLine(texts, "CPU") && !containsLine(texts, "Client:ClientRead") {
				t.Errorf("%s.svg: the wait-event legend has neither CPU nor Client:ClientRead: %q", n, texts)
			}
			continue
		}
		for _, l := range legend {
			if !containsLine(texts, l) {
				t.Errorf("%s.svg: the legend lacks %q among %q", n, l, texts)
			}
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}

// svgTexts returns the text of every <text> element of an SVG file.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	var out []string
	inText := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Errorf("%s: %v", path, err)
			}
			return out
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if x.Name.Local == "text" {
				inText++
			}
		case xml.EndElement:
			if x.Name.Local == "text" {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				out = append(out, string(x))
			}
		}
	}
}
