package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Accepting connections: the postmaster's loop.

// Listen binds every address of listen_addresses on port, as the
// postmaster does, and serves each in its own goroutine. It returns once
// all are bound, or the first failure (having closed what it bound);
// either way it logs what it did, as PostgreSQL logs its listening
// sockets. A later accept failure arrives on Err.
func (s *Server) Listen() error {
	listen, port := s.settings.Value("listen_addresses").Str, int(s.settings.Value("port").Int)
	addrs := listenAddrs(listen, port)
	if len(addrs) == 0 {
		const msg = "no listen addresses: listen_addresses is empty"
		s.log.Error(msg)
		return errors.New(msg)
	}
	ls := make([]net.Listener, 0, len(addrs))
	closeAll := func() {
		for _, l := range ls {
			l.Close()
		}
	}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			s.log.Error("could not listen", "address", a, "err", err)
			closeAll()
			return fmt.Errorf("could not listen on %s: %w", a, err)
		}
		s.log.Info("listening", "address", l.Addr().String())
		ls = append(ls, l)
	}
	for _, l := range ls {
		if !s.track(l) {
			closeAll()
			return errors.New("server: Listen after shutdown")
		}
	}
	s.mu.Lock()
	if s.errc == nil {
		s.errc = make(chan error, len(ls))
	}
	errc := s.errc
	s.mu.Unlock()
	for _, l := range ls {
		go func() {
			if err := s.accept(l); err != nil {
				errc <- err
			}
		}()
	}
	s.readyOnce.Do(func() { close(s.ready) })
	return nil
}

// Err delivers the accept failures of Listen's listeners (a listener that
// fails stops accepting). It is nil before Listen.
func (s *Server) Err() <-chan error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errc
}

// Serve accepts connections on l until Shutdown or Close. It returns nil
// after a shutdown (and closes l if the shutdown had begun already).
func (s *Server) Serve(l net.Listener) error {
	if !s.track(l) {
		l.Close()
		return nil
	}
	s.readyOnce.Do(func() { close(s.ready) })
	return s.accept(l)
}

// track records l so that a shutdown closes it; it refuses once a
// shutdown has begun.
func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed() || s.shutting {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

// closeListeners closes every tracked listener. The caller holds mu.
func (s *Server) closeListeners() {
	for l := range s.listeners {
		l.Close()
	}
	s.listeners = map[net.Listener]struct{}{}
}

// accept runs the accept loop of a tracked listener, one goroutine per
// connection, backing off on temporary errors as net/http does.
func (s *Server) accept(l net.Listener) error {
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if s.isClosed() || s.isShutting() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if delay == 0 {
					delay = 5 * time.Millisecond
				} else if delay *= 2; delay > time.Second {
					delay = time.Second
				}
				time.Sleep(delay)
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		delay = 0
		s.mu.Lock()
		if s.isClosed() {
			s.mu.Unlock()
			conn.Close()
			return nil
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(conn)
	}
}

// listenAddrs expands listen_addresses and port into host:port strings.
// "localhost" means the loopback addresses, "*" every interface.
func listenAddrs(listen string, port int) []string {
	var out []string
	p := strconv.Itoa(port)
	for _, h := range strings.Split(listen, ",") {
		h = strings.TrimSpace(h)
		switch h {
		case "":
			continue
		case "*":
			out = append(out, ":"+p)
		case "localhost":
			out = append(out, "127.0.0.1:"+p)
		default:
			if strings.Contains(h, ":") {
				out = append(out, "["+h+"]:"+p)
			} else {
				out = append(out, h+":"+p)
			}
		}
	}
	return out
}
