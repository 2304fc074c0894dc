package main

import (
	"context"
	"log/slog"
	"time"

	"lockd/internal/buildinfo"
	"lockd/metrics"
	"lockd/server"
)

// startMetrics serves /metrics on metrics_listen_address unless it is
// empty. Like PostgreSQL with a listen address it cannot bind, lockd
// warns and runs on without the endpoint rather than refusing to start.
// The returned function stops the endpoint.
//
// The endpoint is wired here rather than in server because metrics reads
// the server (it imports server, not the other way round).
func startMetrics(srv *server.Server, logger *slog.Logger) (stop func()) {
	addr := srv.Settings().Value("metrics_listen_address").Str
	if addr == "" {
		return func() {}
	}
	reg := metrics.NewRegistry()
	if _, err := metrics.New(reg, metrics.ServerSources(srv, buildinfo.Version())); err != nil {
		logger.Warn("could not set up metrics", "err", err)
		return func() {}
	}
	ep, err := metrics.Serve(addr, reg, logger, srv.Settings().Value("debug_profiles").Bool, srv.Settings().Value("metrics_web_config_file").Str)
	if err != nil {
		logger.Warn("could not listen for metrics", "address", addr, "err", err)
		return func() {}
	}
	logger.Info("serving metrics", "address", "http://"+ep.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ep.Close(ctx)
	}
}
