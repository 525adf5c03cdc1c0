package sshexec

import (
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to a backend and can freeze them: a
// frozen connection stays open but carries nothing, like a peer that
// vanished without a reset.
type proxy struct {
	ln   net.Listener
	port int

	mu    sync.Mutex
	gates map[string]chan struct{} // by the backend leg's local address; closed once frozen
	conns []net.Conn
}

func newProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, gates: map[string]chan struct{}{}}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				in.Close()
				continue
			}
			gate := make(chan struct{})
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.gates[out.LocalAddr().String()] = gate
			p.mu.Unlock()
			go p.pipe(in, out, gate)
			go p.pipe(out, in, gate)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

// pipe copies src to dst until either closes or gate closes; after the gate
// closes it keeps reading and drops everything.
func (p *proxy) pipe(dst, src net.Conn, gate <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-gate:
			if err != nil {
				return
			}
			continue
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// freeze silences the connection the backend accepted as server (its
// remote address is the proxy's leg); other connections keep flowing. A
// test handler freezes its own connection before it returns, so the
// freeze cannot land on a later connection or after the command ended.
func (p *proxy) freeze(t *testing.T, server net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	gate, ok := p.gates[server.RemoteAddr().String()]
	if !ok {
		t.Errorf("proxy: no connection from %s to freeze", server.RemoteAddr())
		return
	}
	select {
	case <-gate:
	default:
		close(gate)
	}
}
