// Command lockd starts the lockd server, PostgreSQL-style:
//
//	lockd [-D DATADIR] [-p PORT] [-c name=value ...] [--config FILE]
//	lockd -C name        print a setting and exit
//	lockd version        print the version and exit
//
// Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"lockd/guc"
	"lockd/internal/buildinfo"
	"lockd/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
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
	configFile := opts.config
	if configFile == "" && opts.show == "" {
		// Like initdb's postgresql.conf: the data directory always has a
		// configuration file, so editing it and sending SIGHUP works.
		configFile = filepath.Join(opts.dataDir, "lockd.conf")
		if err := ensureConfigFile(configFile); err != nil {
			fmt.Fprintf(stderr, "lockd: %v\n", err)
			return 1
		}
	} else if configFile == "" {
		if p := filepath.Join(opts.dataDir, "lockd.conf"); fileExists(p) {
			configFile = p
		}
	}
	if err := settings.LoadFiles(configFile, opts.dataDir); err != nil {
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
	settings.OnChange("log_min_messages", func(v guc.Value) { logLevel.Set(slogLevel(v.Str)) })
	return serve(opts, configFile, settings, logger)
}

// ensureConfigFile creates an empty configuration file (and the data
// directory) if there is none.
func ensureConfigFile(path string) error {
	if fileExists(path) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("could not create data directory: %w", err)
	}
	header := "# lockd configuration file (TOML). Every setting, with its default and\n" +
		"# meaning, is listed in lockd.conf.example. Edit and send SIGHUP (or run\n" +
		"# SELECT pg_reload_conf()) to apply reloadable settings.\n"
	return os.WriteFile(path, []byte(header), 0o600)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// slogLevel maps log_min_messages onto slog. lockd logs its LOG-level
// messages (start-up, reloads, connections) at Info, so every PostgreSQL
// level up to "log" keeps them visible, as PostgreSQL does.
func slogLevel(pgLevel string) slog.Level {
	switch pgLevel {
	case "debug5", "debug4", "debug3", "debug2", "debug1":
		return slog.LevelDebug
	case "fatal", "panic":
		return slog.LevelError
	}
	return slog.LevelInfo
}

func serve(opts *options, configFile string, settings *guc.Registry, logger *slog.Logger) int {
	port := int(settings.Value("port").Int)
	listen := settings.Value("listen_addresses").Str
	lock, err := server.LockDataDir(opts.dataDir, port, listen)
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	defer lock.Release()

	reload := func() bool {
		for _, e := range settings.Reload() {
			logger.Warn(e.Error())
		}
		return true
	}
	srv, err := server.New(server.Config{Settings: settings, Logger: logger, Reload: reload, DataDir: opts.dataDir})
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	addrs := server.ListenAddrs(listen, port)
	if len(addrs) == 0 {
		logger.Error("no listen addresses: listen_addresses is empty")
		return 1
	}
	errc := make(chan error, len(addrs))
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			logger.Error("could not listen", "address", a, "err", err)
			srv.Close()
			return 1
		}
		logger.Info("listening", "address", l.Addr().String())
		go func() { errc <- srv.Serve(l) }()
	}
	stopMetrics := startMetrics(settings, srv, logger)
	defer stopMetrics()
	logger.Info("lockd is ready to accept connections", "version", buildinfo.Version(), "data_directory", opts.dataDir, "config_file", configFile)

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	for {
		select {
		case err := <-errc:
			if err != nil {
				logger.Error("accept failed", "err", err)
				srv.Close()
				return 1
			}
		case sig := <-sigs:
			switch sig {
			case syscall.SIGHUP:
				logger.Info("received SIGHUP, reloading configuration files")
				reload()
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
