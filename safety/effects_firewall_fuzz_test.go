package safety

import "testing"

// FuzzBootFirewallFiles: the parsers of the boot's firewall files and of
// sshd's listen addresses read what a model's command wrote; no input may
// panic them.
func FuzzBootFirewallFiles(f *testing.F) {
	f.Add("*filter\n:INPUT DROP [0:0]\n-A INPUT -p tcp ! --dport 22 -j DROP\n-A INPUT -j c\n-A c -j c\nCOMMIT\n")
	f.Add("table inet f { chain i { type filter hook input priority 0; policy drop; tcp dport { 22, 80-90 } accept; } }")
	f.Add("}}{{ chain { { ; } policy")
	f.Add("[::]:22 0.0.0.0: :9 [")
	f.Fuzz(func(t *testing.T, s string) {
		_ = iptablesSaveCut(s, 22, "192.0.2.7")
		_ = iptablesSaveCut(s, 22, "")
		_ = nftConfCut(s, 22, "127.0.0.1")
		_, _ = parseListen(s)
		_ = rsyslogDiscard(s)
		_, _ = parseSize(s)
	})
}

// TestIptablesSaveLoops: chains that jump into each other many times over
// are walked once each (a judge that walked every path would not end).
func TestIptablesSaveLoops(t *testing.T) {
	text := "*filter\n:INPUT ACCEPT [0:0]\n"
	for i := range 30 {
		for range 20 {
			text += "-A c" + string(rune('a'+i%26)) + " -p tcp -j c" + string(rune('a'+(i+1)%26)) + "\n"
		}
	}
	text += "-A INPUT -j ca\n-A cz -j DROP\nCOMMIT\n"
	if why := iptablesSaveCut(text, 22, "192.0.2.7"); why == "" {
		t.Fatalf("the drop at the end of the jumps was not found")
	}
}
