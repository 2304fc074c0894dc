package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// Handler serves reg in the Prometheus exposition formats (text, and
// OpenMetrics when the scraper asks for it). It also counts its own
// scrapes in promhttp_metric_handler_requests_total, registered in reg.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
		Registry:          reg, // promhttp_metric_handler_errors_total
	}))
}

// Endpoint is a listening /metrics endpoint.
type Endpoint struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Serve listens on addr (host:port; port 0 picks a free one) and serves
// Handler(reg) on /metrics, with a short index page on /, and with
// profiles Go's runtime profiles under /debug/pprof/ (for go tool pprof
// under load). webConfig, if not empty, is a web configuration file in
// the format Prometheus exporters share (exporter-toolkit): TLS, client
// certificates and basic authentication, read again for every connection
// and request so that edits apply without a restart; a file that does
// not validate is an error and nothing is served. It returns once the
// listener is bound; the server runs until Close.
func Serve(addr string, reg *prometheus.Registry, logger *slog.Logger, profiles bool, webConfig string) (*Endpoint, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := web.Validate(webConfig); err != nil {
		return nil, fmt.Errorf("web configuration file %s: %w", webConfig, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(reg))
	if profiles {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><head><title>lockd</title></head><body><h1>lockd</h1><p><a href=\"/metrics\">/metrics</a></p></body></html>\n"))
	})
	e := &Endpoint{
		ln: ln,
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		err: make(chan error, 1),
	}
	noSystemd := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{addr}, WebSystemdSocket: &noSystemd, WebConfigFile: &webConfig}
	go func() {
		err := web.Serve(ln, e.srv, flags, logger)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		e.err <- err
	}()
	return e, nil
}

// Addr is the address the endpoint listens on.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// Close stops the endpoint, waiting for running scrapes until ctx ends.
func (e *Endpoint) Close(ctx context.Context) error {
	err := e.srv.Shutdown(ctx)
	if serr := <-e.err; err == nil {
		err = serr
	}
	return err
}
