package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"lockd/guc"
	"lockd/internal/buildinfo"
	"lockd/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is lockd with its arguments; it returns the exit code: 0 clean
// shutdown, 1 runtime failure, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "bench" {
		return runBench(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "metrics-web-config" {
		return runWebConfig(args[1:], stdout, stderr)
	}
	if len(args) == 1 {
		switch args[0] {
		case "version", "--version", "-V":
			fmt.Fprintf(stdout, "lockd %s (PostgreSQL 15 wire protocol)\n", buildinfo.Version())
			return 0
		case "--help", "-?", "help":
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	opts, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "lockd: %v\nTry \"lockd --help\" for more information.\n", err)
		return 2
	}
	logLevel := new(slog.LevelVar)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	settings := guc.NewRegistry(logger)
	for _, kv := range opts.settings {
		if err := settings.SetCommandLine(kv[0], kv[1]); err != nil {
			fmt.Fprintf(stderr, "lockd: %v\n", err)
			return 2
		}
	}
	// -C only reads; otherwise the data directory gets its lockd.conf.
	configFile, err := server.LoadSettings(settings, opts.dataDir, opts.config, opts.show == "")
	if err != nil {
		fmt.Fprintf(stderr, "lockd: %v\n", err)
		return 1
	}
	if opts.show != "" {
		s, _ := settings.NewSession(nil)
		v, _, err := s.Show(opts.show)
		if err != nil {
			fmt.Fprintf(stderr, "lockd: %v\n", err)
			return 2
		}
		fmt.Fprintln(stdout, v)
		return 0
	}
	password := ""
	if opts.pwfile != "" {
		// As initdb --pwfile: the first line is the password.
		data, err := os.ReadFile(opts.pwfile)
		if err != nil {
			fmt.Fprintf(stderr, "lockd: could not read password from file \"%s\": %v\n", opts.pwfile, err)
			return 1
		}
		password, _, _ = strings.Cut(string(data), "\n")
		password = strings.TrimRight(password, "\r")
		if password == "" {
			fmt.Fprintf(stderr, "lockd: password file \"%s\" is empty\n", opts.pwfile)
			return 1
		}
	}
	srv, err := server.New(server.Config{Settings: settings, Logger: logger, LogLevel: logLevel, DataDir: opts.dataDir,
		BootstrapUser: opts.user, BootstrapPassword: password})
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	if err := srv.Listen(); err != nil {
		srv.Close() // Listen has logged why
		return 1
	}
	defer startMetrics(srv, logger)()
	logger.Info("lockd is ready to accept connections", "version", buildinfo.Version(), "data_directory", opts.dataDir, "config_file", configFile)
	return serveSignals(srv, logger)
}

// serveSignals turns signals into PostgreSQL's reload and three shutdown
// modes, and returns the exit code once the server has stopped.
func serveSignals(srv *server.Server, logger *slog.Logger) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	errc := srv.Err()
	for {
		select {
		case err := <-errc:
			logger.Error("accept failed", "err", err)
			srv.Close()
			return 1
		case sig := <-sigs:
			switch sig {
			case syscall.SIGHUP:
				logger.Info("received SIGHUP, reloading configuration files")
				srv.ReloadConfig()
			case syscall.SIGTERM:
				logger.Info("received smart shutdown request")
				if err := srv.Shutdown(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
					logger.Error("shutdown", "err", err)
				}
				logger.Info("database system is shut down")
				return 0
			case syscall.SIGINT:
				logger.Info("received fast shutdown request")
				_ = srv.ShutdownFast(context.Background())
				logger.Info("database system is shut down")
				return 0
			case syscall.SIGQUIT:
				logger.Info("received immediate shutdown request")
				srv.Close()
				return 0
			}
		}
	}
}
