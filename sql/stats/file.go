package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"lockd/sql/types"
)

// The statistics file's form of TableStats. Values are kept exactly: the
// integer-like types as JSON numbers, floats as Go's shortest text (NaN
// and the infinities included), strings and numerics as strings.

type fileTable struct {
	RelTuples float64            `json:"reltuples"`
	RelPages  float64            `json:"relpages"`
	AllVis    float64            `json:"relallvisible,omitempty"`
	Inherited bool               `json:"inherited,omitempty"`
	Cols      map[int]fileColumn `json:"cols,omitempty"` // by attnum
}

type fileColumn struct {
	Type        uint32            `json:"type"`
	NullFrac    float64           `json:"null_frac"`
	AvgWidth    int32             `json:"avg_width"`
	NDistinct   float64           `json:"n_distinct"`
	MCV         []json.RawMessage `json:"mcv,omitempty"`
	MCVFreq     []float64         `json:"mcv_freq,omitempty"`
	Histogram   []json.RawMessage `json:"histogram,omitempty"`
	Correlation *float64          `json:"correlation,omitempty"`
}

func encodeTable(ts *TableStats) fileTable {
	f := fileTable{RelTuples: ts.RelTuples, RelPages: ts.RelPages, AllVis: ts.RelAllVisible, Inherited: ts.Inherited}
	for i, c := range ts.Cols {
		if c == nil {
			continue
		}
		if f.Cols == nil {
			f.Cols = map[int]fileColumn{}
		}
		fc := fileColumn{Type: c.TypeOID, NullFrac: c.NullFrac, AvgWidth: c.AvgWidth, NDistinct: c.NDistinct, MCVFreq: c.MCVFreq}
		fc.MCV = encodeDatums(c.TypeOID, c.MCV)
		fc.Histogram = encodeDatums(c.TypeOID, c.Histogram)
		if c.HasCorrelation {
			v := c.Correlation
			fc.Correlation = &v
		}
		f.Cols[i+1] = fc
	}
	return f
}

func (f fileTable) decode() (*TableStats, error) {
	ts := &TableStats{RelTuples: f.RelTuples, RelPages: f.RelPages, RelAllVisible: f.AllVis, Inherited: f.Inherited}
	for attnum, fc := range f.Cols {
		if attnum < 1 || attnum > 1600 {
			return nil, fmt.Errorf("bad attribute number %d", attnum)
		}
		for len(ts.Cols) < attnum {
			ts.Cols = append(ts.Cols, nil)
		}
		c := &ColumnStats{TypeOID: fc.Type, NullFrac: fc.NullFrac, AvgWidth: fc.AvgWidth, NDistinct: fc.NDistinct, MCVFreq: fc.MCVFreq}
		var err error
		if c.MCV, err = decodeDatums(fc.Type, fc.MCV); err != nil {
			return nil, err
		}
		if c.Histogram, err = decodeDatums(fc.Type, fc.Histogram); err != nil {
			return nil, err
		}
		if len(c.MCV) != len(c.MCVFreq) {
			return nil, fmt.Errorf("%d most common values with %d frequencies", len(c.MCV), len(c.MCVFreq))
		}
		if fc.Correlation != nil {
			c.Correlation, c.HasCorrelation = *fc.Correlation, true
		}
		ts.Cols[attnum-1] = c
	}
	return ts, nil
}

// valueKind is how a type's values sit in a Datum: I, F or S.
func valueKind(typ uint32) byte {
	t, _ := types.TypeByOID(typ)
	switch types.CategoryOf(t) {
	case types.CatFloat:
		return 'F'
	case types.CatString, types.CatNumeric:
		return 'S'
	}
	if typ == types.OIDInterval || types.CategoryOf(t) != types.CatOther {
		return 'I'
	}
	return 'S'
}

func encodeDatums(typ uint32, ds []types.Datum) []json.RawMessage {
	if ds == nil {
		return nil
	}
	kind := valueKind(typ)
	out := make([]json.RawMessage, len(ds))
	for i, d := range ds {
		var b []byte
		switch kind {
		case 'I':
			b = strconv.AppendInt(nil, d.I, 10)
		case 'F':
			b = strconv.AppendQuote(nil, strconv.FormatFloat(d.F, 'g', -1, 64))
		default:
			b, _ = json.Marshal(d.S)
		}
		out[i] = b
	}
	return out
}

func decodeDatums(typ uint32, raw []json.RawMessage) ([]types.Datum, error) {
	if raw == nil {
		return nil, nil
	}
	kind := valueKind(typ)
	out := make([]types.Datum, len(raw))
	for i, r := range raw {
		switch kind {
		case 'I':
			if err := json.Unmarshal(r, &out[i].I); err != nil {
				return nil, err
			}
		case 'F':
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return nil, err
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, err
			}
			out[i].F = f
		default:
			if err := json.Unmarshal(r, &out[i].S); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
