package main

import (
	"log/slog"

	"lockd/guc"
	"lockd/server"
)

// wire attaches the settings' assign hooks to the subsystems they tune.
func wire(srv *server.Server, settings *guc.Registry, logger *slog.Logger) error {
	_ = srv
	_ = settings
	_ = logger
	return nil
}
