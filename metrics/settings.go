package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"lockd/guc"
)

// settingsCollector exports the numeric and boolean settings in force (and
// the enum ones as info-style series), so a dashboard shows which tunables
// a run had, and the build version. String settings (paths, addresses) are
// left out.
type settingsCollector struct {
	reg     *guc.Registry // nil: no lockd_setting
	version string        // "": no lockd_build_info

	setting, enum, buildInfo *prometheus.Desc
}

func newSettingsCollector(reg *guc.Registry, version string) *settingsCollector {
	return &settingsCollector{
		reg:     reg,
		version: version,
		setting: newDesc("", "setting",
			"Server-wide value of each bool, integer and real setting, as pg_settings.setting shows it (in the setting's own unit, given by the unit label; booleans are 0 or 1).",
			"name", "unit"),
		enum: newDesc("", "setting_enum",
			"Always 1; the value label is the server-wide value of an enum setting (relation_extension_mode, default_transaction_isolation, ...).",
			"name", "value"),
		buildInfo: newDesc("", "build_info", "Always 1; the version label is lockd's version.", "version"),
	}
}

func (c *settingsCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.setting, c.enum, c.buildInfo)
}

func (c *settingsCollector) Collect(ch chan<- prometheus.Metric) {
	if c.reg != nil {
		for i := range guc.Table {
			d := &guc.Table[i]
			var v float64
			switch d.Type {
			case guc.Bool:
				if c.reg.Value(d.Name).Bool {
					v = 1
				}
			case guc.Int:
				v = float64(c.reg.Value(d.Name).Int)
			case guc.Real:
				v = c.reg.Value(d.Name).Real
			case guc.Enum:
				gauge(ch, c.enum, 1, d.Name, c.reg.Value(d.Name).Str)
				continue
			default:
				continue
			}
			gauge(ch, c.setting, v, d.Name, d.Unit)
		}
	}
	if c.version != "" {
		gauge(ch, c.buildInfo, 1, c.version)
	}
}
