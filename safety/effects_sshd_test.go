package safety

import (
	"maps"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// debianSSHD is `sshd -T -C user=root,...` on an untouched Debian 12 host
// (OpenSSH 9.2), the keywords the judge reads; repeated keywords joined
// with spaces as the sandbox's report does.
var debianSSHD = map[string]string{
	"port":                     "22",
	"addressfamily":            "any",
	"listenaddress":            "[::]:22 0.0.0.0:22",
	"maxsessions":              "10",
	"maxstartups":              "10:30:100",
	"ciphers":                  "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com",
	"macs":                     "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1",
	"kexalgorithms":            "sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256",
	"hostkeyalgorithms":        "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,rsa-sha2-512,rsa-sha2-256",
	"pubkeyacceptedalgorithms": "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,rsa-sha2-512,rsa-sha2-256",
	"hostkey":                  "/etc/ssh/ssh_host_rsa_key /etc/ssh/ssh_host_ecdsa_key /etc/ssh/ssh_host_ed25519_key",
	"banner":                   "none",
	"permituserenvironment":    "no",
	"trustedusercakeys":        "none",
	"authorizedprincipalsfile": "none",
	"authorizedkeyscommand":    "none",
	"forcecommand":             "none",
	"chrootdirectory":          "none",
	"authorizedkeysfile":       ".ssh/authorized_keys .ssh/authorized_keys2",
	"permitrootlogin":          "without-password",
}

// TestJudgeSSHDEffective: sshd settings that lock the worker out only at
// sshd's next reload or restart, or let someone else in, judged from sshd
// -T after commands written here (not the corpus's), and the hardening
// next to them that must stay allowed.
func TestJudgeSSHDEffective(t *testing.T) {
	// conf is a command that wrote lines to a new sshd_config.d file and
	// left sshd -T as debianSSHD with set applied ("" deletes a key).
	conf := func(lines string, set map[string]string, more ...nightshift.FileChange) nightshift.Effects {
		eff := maps.Clone(debianSSHD)
		for k, v := range set {
			if v == "" {
				delete(eff, k)
			} else {
				eff[k] = v
			}
		}
		c := nightshift.FileChange{Path: "/etc/ssh/sshd_config.d/50-x.conf", Change: nightshift.ChangeCreated,
			Diff:  "--- /dev/null\n+++ b/etc/ssh/sshd_config.d/50-x.conf\n@@ -0,0 +1 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(lines, "\n"), "\n", "\n+") + "\n",
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: int64(len(lines))}}
		return nightshift.Effects{Changes: append([]nightshift.FileChange{c}, more...), Origin: "192.0.2.7",
			SSHD: &nightshift.SSHDCheck{Login: "root", TestOK: true, Effective: eff}}
	}
	file := func(p, content string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, Diff: "+" + strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+") + "\n",
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o600, Size: int64(len(content))}}
	}
	fifo := func(p string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileOther, Mode: 0o644}}
	}
	origin := func(e nightshift.Effects, o string) nightshift.Effects { e.Origin = o; return e }
	// hostKeyChange: a host key file changed (its private key's hash now
	// sum; "" when deleted), sshd -T otherwise the host's own.
	hostKeyChange := func(p string, ch nightshift.Change, sum string) nightshift.Effects {
		before := nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o640, SHA256: "aa", Size: 411}
		after := before
		switch ch {
		case nightshift.ChangeDeleted:
			after = nightshift.FileState{}
		case nightshift.ChangeMeta:
			after.Mode = 0o600
		default:
			after.SHA256 = sum
		}
		return nightshift.Effects{Origin: "192.0.2.7", Changes: []nightshift.FileChange{{Path: p, Change: ch, Before: before, After: after}},
			SSHD: &nightshift.SSHDCheck{Login: "root", TestOK: true, Effective: maps.Clone(debianSSHD)}}
	}
	root := EffectsPolicy{}
	pinned := EffectsPolicy{HostKeyAlgorithms: []string{"ssh-ed25519"}, KeyAlgorithms: []string{"ssh-ed25519"}}
	// Policies from the facts of the worker's SSH connection, as
	// sshexec's TestOpenSSHFacts sees them against a real sshd: known_hosts
	// pinning ed25519 or RSA only, an ed25519 key, an RSA key (which
	// x/crypto signs with rsa-sha2-256), a certificate; the worker dialled
	// 192.0.2.1:22 and sshd saw it come from 192.0.2.7.
	server := netip.MustParseAddrPort("192.0.2.1:22")
	edHost := nightshift.SSHFacts{HostKeyAlgorithm: "ssh-ed25519", HostKeyType: "ssh-ed25519", KnownHostKeyTypes: []string{"ssh-ed25519"},
		HostKeyAlgorithms: []string{"ssh-ed25519"}, Server: server}
	rsaHost := nightshift.SSHFacts{HostKeyAlgorithm: "rsa-sha2-512", HostKeyType: "ssh-rsa", KnownHostKeyTypes: []string{"ssh-rsa"},
		HostKeyAlgorithms: []string{"rsa-sha2-256", "rsa-sha2-512"}, Server: server}
	edKey := func(f nightshift.SSHFacts) nightshift.SSHFacts {
		f.KeyType, f.KeyAlgorithm, f.KeyAlgorithms = "ssh-ed25519", "ssh-ed25519", []string{"ssh-ed25519"}
		return f
	}
	rsaKey := func(f nightshift.SSHFacts) nightshift.SSHFacts {
		f.KeyType, f.KeyAlgorithm, f.KeyAlgorithms = "ssh-rsa", "rsa-sha2-256", []string{"rsa-sha2-256", "rsa-sha2-512", "ssh-rsa"}
		return f
	}
	certKey := func(f nightshift.SSHFacts) nightshift.SSHFacts {
		c := "ssh-ed25519-cert-v01@openssh.com"
		f.KeyType, f.KeyAlgorithm, f.KeyAlgorithms = c, c, []string{c}
		return f
	}
	v6 := func(f nightshift.SSHFacts) nightshift.SSHFacts {
		f.Server = netip.MustParseAddrPort("[2001:db8::1]:22")
		return f
	}
	pinsEd := root.WithSSH(edKey(edHost))
	pinsRSA := root.WithSSH(edKey(rsaHost))
	rsaWorker := root.WithSSH(rsaKey(edHost))
	certWorker := root.WithSSH(certKey(edHost))
	v6Worker := root.WithSSH(edKey(v6(edHost)))
	from := func(f nightshift.SSHFacts, a string) nightshift.SSHFacts {
		f.Local = netip.MustParseAddrPort(a)
		return f
	}
	fromWorker := root.WithSSH(from(edKey(edHost), "192.0.2.7:40000"))
	natWorker := root.WithSSH(from(edKey(edHost), "10.0.0.7:40000"))
	noRSA := "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com"
	tests := []judgeCase{ // entry "" means allowed
		{"untouched defaults", conf("# nothing", nil), root, "", ""},
		// Address family and listen addresses.
		{"AddressFamily inet6, IPv4 worker", conf("AddressFamily inet6", map[string]string{"addressfamily": "inet6", "listenaddress": "[::]:22"}), root, "lockout", "AddressFamily inet6 and the worker connects over IPv4"},
		{"AddressFamily inet, IPv4 worker (hardening)", conf("AddressFamily inet", map[string]string{"addressfamily": "inet", "listenaddress": "0.0.0.0:22"}), root, "", ""},
		{"AddressFamily inet, IPv6 worker", origin(conf("AddressFamily inet", map[string]string{"addressfamily": "inet", "listenaddress": "0.0.0.0:22"}), "2001:db8::7"), root, "lockout", "over IPv6"},
		{"AddressFamily inet, worker address unknown", origin(conf("AddressFamily inet", map[string]string{"addressfamily": "inet", "listenaddress": "0.0.0.0:22"}), ""), root, "lockout", "not known"},
		{"ListenAddress elsewhere", conf("ListenAddress 10.9.9.9", map[string]string{"listenaddress": "10.9.9.9:22"}), root, "lockout", "listen only on 10.9.9.9:22"},
		{"ListenAddress 0.0.0.0", conf("ListenAddress 0.0.0.0", map[string]string{"listenaddress": "0.0.0.0:22"}), root, "", ""},
		{"ListenAddress wildcard on another port", conf("ListenAddress 0.0.0.0:2222", map[string]string{"listenaddress": "0.0.0.0:2222"}), root, "lockout", "0.0.0.0:2222"},
		{"ListenAddress loopback, loopback worker", origin(conf("ListenAddress 127.0.0.1", map[string]string{"listenaddress": "127.0.0.1:22"}), "127.0.0.1"), root, "", ""},
		{"ListenAddress without sshd -T", nightshift.Effects{Changes: conf("ListenAddress 0.0.0.0", nil).Changes}, root, "lockout", "could not be read"},
		{"host's own ListenAddress, another setting changed", conf("MaxAuthTries 4", map[string]string{"listenaddress": "10.9.9.9:22", "maxauthtries": "4"}), root, "", ""},
		{"host's own AddressFamily inet6, IPv4 worker, another setting changed", conf("LoginGraceTime 60", map[string]string{"addressfamily": "inet6"}), root, "", ""},
		{"ListenAddress removed from the main file", nightshift.Effects{Origin: "192.0.2.7", Changes: []nightshift.FileChange{{Path: "/etc/ssh/sshd_config", Change: nightshift.ChangeModified,
			Diff: "-ListenAddress 0.0.0.0\n", After: nightshift.FileState{Kind: nightshift.FileRegular}}},
			SSHD: &nightshift.SSHDCheck{Login: "root", TestOK: true, Effective: func() map[string]string { m := maps.Clone(debianSSHD); m["listenaddress"] = "10.9.9.9:22"; return m }()}}, root, "lockout", "10.9.9.9:22"},
		{"a drop-in deleted, listen addresses no longer cover", nightshift.Effects{Origin: "192.0.2.7", Changes: []nightshift.FileChange{{Path: "/etc/ssh/sshd_config.d/10-listen.conf", Change: nightshift.ChangeDeleted,
			Before: nightshift.FileState{Kind: nightshift.FileRegular}}},
			SSHD: &nightshift.SSHDCheck{Login: "root", TestOK: true, Effective: func() map[string]string { m := maps.Clone(debianSSHD); m["listenaddress"] = "10.9.9.9:22"; return m }()}}, root, "lockout", "10.9.9.9:22"},
		// Algorithms against the worker's client (x/crypto/ssh).
		{"Ciphers 3des-cbc only", conf("Ciphers 3des-cbc", map[string]string{"ciphers": "3des-cbc"}), root, "lockout", "Ciphers 3des-cbc has nothing in common"},
		{"Ciphers: SSG's strong list", conf("Ciphers aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com", map[string]string{"ciphers": "aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com"}), root, "", ""},
		{"MACs umac only", conf("MACs umac-128-etm@openssh.com", map[string]string{"macs": "umac-128-etm@openssh.com"}), root, "lockout", "MACs umac-128-etm@openssh.com"},
		{"MACs: SSG's strong list", conf("MACs hmac-sha2-512,hmac-sha2-256", map[string]string{"macs": "hmac-sha2-512,hmac-sha2-256"}), root, "", ""},
		{"KexAlgorithms sntrup only", conf("KexAlgorithms sntrup761x25519-sha512@openssh.com", map[string]string{"kexalgorithms": "sntrup761x25519-sha512@openssh.com"}), root, "lockout", "KexAlgorithms sntrup761x25519"},
		{"KexAlgorithms group-exchange only (not in the client's defaults)", conf("KexAlgorithms diffie-hellman-group-exchange-sha256", map[string]string{"kexalgorithms": "diffie-hellman-group-exchange-sha256"}), root, "lockout", "KexAlgorithms"},
		{"KexAlgorithms: SSG's strong list", conf("KexAlgorithms ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256", map[string]string{"kexalgorithms": "ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256"}), root, "", ""},
		{"HostKeyAlgorithms rsa only, pin unknown", conf("HostKeyAlgorithms rsa-sha2-512", map[string]string{"hostkeyalgorithms": "rsa-sha2-512"}), root, "lockout", "ed25519 host key"},
		{"HostKeyAlgorithms rsa only, worker pins ed25519", conf("HostKeyAlgorithms rsa-sha2-512", map[string]string{"hostkeyalgorithms": "rsa-sha2-512"}), pinned, "lockout", "no host key the worker's known_hosts accepts"},
		{"HostKeyAlgorithms without ssh-rsa (SHA-1), pin unknown", conf("HostKeyAlgorithms -ssh-rsa", map[string]string{"hostkeyalgorithms": "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256"}), root, "", ""},
		{"HostKey ed25519 only, worker pins ed25519", conf("HostKey /etc/ssh/ssh_host_ed25519_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key"}), pinned, "", ""},
		{"HostKey rsa only, worker pins ed25519", conf("HostKey /etc/ssh/ssh_host_rsa_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_rsa_key"}), pinned, "lockout", "known_hosts accepts"},
		{"HostKey ed25519 only, pin unknown", conf("HostKey /etc/ssh/ssh_host_ed25519_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key"}), root, "lockout", "rsa host key"},
		{"PubkeyAcceptedAlgorithms rsa only, worker's key ed25519", conf("PubkeyAcceptedAlgorithms rsa-sha2-512", map[string]string{"pubkeyacceptedalgorithms": "rsa-sha2-512"}), pinned, "lockout", "does not accept the worker's key"},
		{"PubkeyAcceptedAlgorithms rsa only, key unknown", conf("PubkeyAcceptedAlgorithms rsa-sha2-512", map[string]string{"pubkeyacceptedalgorithms": "rsa-sha2-512"}), root, "lockout", "ed25519 keys"},
		{"PubkeyAcceptedAlgorithms without ssh-rsa", conf("PubkeyAcceptedAlgorithms -ssh-rsa*", map[string]string{"pubkeyacceptedalgorithms": "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256"}), root, "", ""},
		{"host's own ed25519-only HostKey, another setting changed", conf("MaxAuthTries 4", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key", "maxauthtries": "4"}), root, "", ""},
		{"host's own rsa-only HostKey, worker pins ed25519", conf("MaxAuthTries 4", map[string]string{"hostkey": "/etc/ssh/ssh_host_rsa_key"}), pinned, "lockout", "known_hosts accepts"},
		// The worker's own facts (sshexec.Client.SSHFacts through
		// EffectsPolicy.WithSSH).
		{"HostKey ed25519 only (SSG), known_hosts pins ed25519", conf("HostKey /etc/ssh/ssh_host_ed25519_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key"}), pinsEd, "", ""},
		{"HostKey ed25519 only, known_hosts pins RSA only", conf("HostKey /etc/ssh/ssh_host_ed25519_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key"}), pinsRSA, "lockout", "no host key the worker's known_hosts accepts (rsa-sha2-256,rsa-sha2-512)"},
		{"HostKey ed25519 and RSA, known_hosts pins RSA only", conf("HostKey /etc/ssh/ssh_host_ed25519_key\nHostKey /etc/ssh/ssh_host_rsa_key", map[string]string{"hostkey": "/etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_rsa_key"}), pinsRSA, "", ""},
		{"HostKeyAlgorithms ssh-ed25519 only, known_hosts pins RSA only", conf("HostKeyAlgorithms ssh-ed25519", map[string]string{"hostkeyalgorithms": "ssh-ed25519"}), pinsRSA, "lockout", "known_hosts accepts"},
		{"PubkeyAcceptedAlgorithms without RSA, the worker's key RSA", conf("PubkeyAcceptedAlgorithms "+noRSA, map[string]string{"pubkeyacceptedalgorithms": noRSA}), rsaWorker, "lockout", "does not accept the worker's key (rsa-sha2-256)"},
		{"PubkeyAcceptedAlgorithms without RSA, the worker's key ed25519", conf("PubkeyAcceptedAlgorithms "+noRSA, map[string]string{"pubkeyacceptedalgorithms": noRSA}), pinsEd, "", ""},
		{"PubkeyAcceptedAlgorithms without RSA, the worker's key unknown", conf("PubkeyAcceptedAlgorithms "+noRSA, map[string]string{"pubkeyacceptedalgorithms": noRSA}), root, "lockout", "rsa keys"},
		// x/crypto signs an RSA login with rsa-sha2-256 whatever sshd
		// accepts (TestOpenSSHFacts: sshd refuses it).
		{"PubkeyAcceptedAlgorithms rsa-sha2-512 only, the worker's key RSA", conf("PubkeyAcceptedAlgorithms rsa-sha2-512", map[string]string{"pubkeyacceptedalgorithms": "rsa-sha2-512"}), rsaWorker, "lockout", "does not accept the worker's key"},
		{"PubkeyAcceptedAlgorithms rsa-sha2-512,rsa-sha2-256, the worker's key RSA", conf("PubkeyAcceptedAlgorithms rsa-sha2-512,rsa-sha2-256", map[string]string{"pubkeyacceptedalgorithms": "rsa-sha2-512,rsa-sha2-256"}), rsaWorker, "", ""},
		{"PubkeyAcceptedAlgorithms without certificates, the worker's a certificate", conf("PubkeyAcceptedAlgorithms ssh-ed25519", map[string]string{"pubkeyacceptedalgorithms": "ssh-ed25519"}), certWorker, "lockout", "ssh-ed25519-cert-v01@openssh.com"},
		{"PubkeyAcceptedAlgorithms with its certificate form, the worker's a certificate", conf("PubkeyAcceptedAlgorithms ssh-ed25519-cert-v01@openssh.com,ssh-ed25519", map[string]string{"pubkeyacceptedalgorithms": "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519"}), certWorker, "", ""},
		{"ListenAddress the address the worker dialled", conf("ListenAddress 192.0.2.1", map[string]string{"listenaddress": "192.0.2.1:22"}), pinsEd, "", ""},
		{"ListenAddress the dialled address and loopback", conf("ListenAddress 127.0.0.1\nListenAddress 192.0.2.1", map[string]string{"listenaddress": "127.0.0.1:22 192.0.2.1:22"}), pinsEd, "", ""},
		{"ListenAddress another address of the host", conf("ListenAddress 192.0.2.99", map[string]string{"listenaddress": "192.0.2.99:22"}), pinsEd, "lockout", "to 192.0.2.1, port 22): listen on 192.0.2.1 too"},
		{"ListenAddress the dialled address on another port", conf("ListenAddress 192.0.2.1:2222", map[string]string{"listenaddress": "192.0.2.1:2222"}), pinsEd, "lockout", "192.0.2.1:2222"},
		{"ListenAddress the worker's own address (not the host's)", conf("ListenAddress 192.0.2.7", map[string]string{"listenaddress": "192.0.2.7:22"}), pinsEd, "lockout", "does not cover"},
		{"ListenAddress the dialled address, address not known", conf("ListenAddress 192.0.2.1", map[string]string{"listenaddress": "192.0.2.1:22"}), root, "lockout", "does not cover"},
		{"ListenAddress the dialled IPv6 address", origin(conf("ListenAddress 2001:db8::1", map[string]string{"listenaddress": "[2001:db8::1]:22"}), "2001:db8::7"), v6Worker, "", ""},
		{"ListenAddress 0.0.0.0, the worker dialled IPv6", origin(conf("ListenAddress 0.0.0.0", map[string]string{"listenaddress": "0.0.0.0:22"}), "2001:db8::7"), v6Worker, "lockout", "does not cover"},
		{"AddressFamily inet, origin unknown, the worker dialled IPv4", origin(conf("AddressFamily inet", map[string]string{"addressfamily": "inet", "listenaddress": "0.0.0.0:22"}), ""), pinsEd, "", ""},
		// The worker's own end: sshd sees it (no translation), or another
		// address (a NAT or a forwarder between them).
		{"ListenAddress the dialled address, sshd sees the worker's own address", conf("ListenAddress 192.0.2.1", map[string]string{"listenaddress": "192.0.2.1:22"}), fromWorker, "", ""},
		{"ListenAddress the dialled address, the connection translated", conf("ListenAddress 192.0.2.1", map[string]string{"listenaddress": "192.0.2.1:22"}), natWorker, "lockout", "translated on the way, so 192.0.2.1"},
		{"ListenAddress the dialled address, translated, origin unknown", origin(conf("ListenAddress 192.0.2.1", map[string]string{"listenaddress": "192.0.2.1:22"}), ""), fromWorker, "lockout", "translated on the way"},
		{"ListenAddress 0.0.0.0, the connection translated", conf("ListenAddress 0.0.0.0", map[string]string{"listenaddress": "0.0.0.0:22"}), natWorker, "", ""},
		{"AddressFamily inet6, the worker dialled IPv4", conf("AddressFamily inet6", map[string]string{"addressfamily": "inet6", "listenaddress": "[::]:22"}), pinsEd, "lockout", "reaches sshd at 192.0.2.1"},
		// Host key files replaced or deleted (ssh-keygen over them, rm).
		{"the pinned ed25519 host key regenerated", hostKeyChange("/etc/ssh/ssh_host_ed25519_key", nightshift.ChangeModified, "bb"), pinsEd, "lockout", "would replace the host key /etc/ssh/ssh_host_ed25519_key, which the worker's known_hosts pins (ssh-ed25519)"},
		{"the pinned ed25519 host key deleted", hostKeyChange("/etc/ssh/ssh_host_ed25519_key", nightshift.ChangeDeleted, ""), pinsEd, "lockout", "would delete the host key"},
		{"the RSA host key regenerated, known_hosts pins ed25519", hostKeyChange("/etc/ssh/ssh_host_rsa_key", nightshift.ChangeModified, "bb"), pinsEd, "", ""},
		{"the RSA host key regenerated, known_hosts pins RSA", hostKeyChange("/etc/ssh/ssh_host_rsa_key", nightshift.ChangeModified, "bb"), pinsRSA, "lockout", "pins (rsa-sha2-256,rsa-sha2-512)"},
		{"the RSA host key regenerated, pin unknown", hostKeyChange("/etc/ssh/ssh_host_rsa_key", nightshift.ChangeModified, "bb"), root, "lockout", "may pin"},
		{"a host key sshd_config names, regenerated, pin unknown", func() nightshift.Effects {
			e := hostKeyChange("/etc/ssh/keys/host", nightshift.ChangeModified, "bb")
			e.SSHD.Effective["hostkey"] = "/etc/ssh/keys/host"
			return e
		}(), pinsEd, "lockout", "/etc/ssh/keys/host"},
		{"the pinned host key's mode tightened (SSG)", hostKeyChange("/etc/ssh/ssh_host_ed25519_key", nightshift.ChangeMeta, "aa"), pinsEd, "", ""},
		// Sessions, banner.
		{"MaxSessions 0", conf("MaxSessions 0", map[string]string{"maxsessions": "0"}), root, "lockout", "MaxSessions 0"},
		{"MaxSessions 10 (SSG)", conf("MaxSessions 10", map[string]string{"maxsessions": "10"}), root, "", ""},
		{"MaxStartups 0 (sshd -t rejects it)", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: false, TestOutput: "line 1: Invalid MaxStartups spec."}}, root, "lockout", "Invalid MaxStartups"},
		{"Banner /dev/zero", conf("Banner /dev/zero", map[string]string{"banner": "/dev/zero"}), root, "lockout", "Banner /dev/zero is not a regular file"},
		{"Banner on a FIFO the command made", conf("Banner /etc/issue.fifo", map[string]string{"banner": "/etc/issue.fifo"}, fifo("/etc/issue.fifo")), root, "lockout", "would not be a regular file"},
		{"Banner /etc/issue.net (SSG)", conf("Banner /etc/issue.net", map[string]string{"banner": "/etc/issue.net"}), root, "", ""},
		{"ClientAliveInterval (SSG)", conf("ClientAliveInterval 300\nClientAliveCountMax 0", map[string]string{"clientaliveinterval": "300"}), root, "", ""},
		// Session environments.
		{"PermitUserEnvironment yes and a PATH for root", conf("PermitUserEnvironment yes", map[string]string{"permituserenvironment": "yes"}, file("/root/.ssh/environment", "PATH=/nonexistent\n")), root, "lockout", "PATH set in /root/.ssh/environment"},
		{"PermitUserEnvironment yes alone", conf("PermitUserEnvironment yes", map[string]string{"permituserenvironment": "yes"}), root, "lockout", "cannot see those files"},
		{"PermitUserEnvironment no (SSG)", conf("PermitUserEnvironment no", nil), root, "", ""},
		{"LD_PRELOAD in root's ~/.ssh/environment, PUE off", nightshift.Effects{Changes: []nightshift.FileChange{file("/root/.ssh/environment", "LD_PRELOAD=/tmp/x.so\n")}}, root, "lockout", "LD_PRELOAD"},
		{"TZ in root's ~/.ssh/environment", nightshift.Effects{Changes: []nightshift.FileChange{file("/root/.ssh/environment", "TZ=UTC\n")}}, root, "", ""},
		{"SetEnv PATH", conf("SetEnv PATH=/opt/evil", map[string]string{"setenv": "PATH=/opt/evil"}), root, "lockout", "SetEnv PATH=/opt/evil"},
		{"SetEnv LANG", conf("SetEnv LANG=C.UTF-8", map[string]string{"setenv": "LANG=C.UTF-8"}), root, "", ""},
		// New ways in.
		{"TrustedUserCAKeys added", conf("TrustedUserCAKeys /etc/ssh/user_ca.pub", map[string]string{"trustedusercakeys": "/etc/ssh/user_ca.pub"}, file("/etc/ssh/user_ca.pub", "ssh-ed25519 AAAAC3Nza other-ca\n")), root, "privilege", "TrustedUserCAKeys"},
		{"a key appended to the host's existing CA file", nightshift.Effects{Changes: []nightshift.FileChange{file("/etc/ssh/user_ca.pub", "ssh-ed25519 AAAAC3Nza other-ca\n")}, Origin: "192.0.2.7",
			SSHD: &nightshift.SSHDCheck{Login: "root", TestOK: true, Effective: func() map[string]string {
				m := maps.Clone(debianSSHD)
				m["trustedusercakeys"] = "/etc/ssh/user_ca.pub"
				return m
			}()}}, root, "privilege", "a change of /etc/ssh/user_ca.pub"},
		{"AuthorizedKeysCommand added", conf("AuthorizedKeysCommand /usr/local/bin/keys %u\nAuthorizedKeysCommandUser nobody", map[string]string{"authorizedkeyscommand": "/usr/local/bin/keys %u"}), root, "privilege", "AuthorizedKeysCommand"},
		{"AuthorizedPrincipalsFile added", conf("AuthorizedPrincipalsFile /etc/ssh/principals/%u", map[string]string{"authorizedprincipalsfile": "/etc/ssh/principals/%u"}), root, "privilege", "AuthorizedPrincipalsFile"},
		{"host's CA left alone, another setting changed", conf("MaxAuthTries 4", map[string]string{"trustedusercakeys": "/etc/ssh/user_ca.pub", "maxauthtries": "4"}), root, "", ""},
		{"AuthorizedKeysFile in /tmp", conf("AuthorizedKeysFile .ssh/authorized_keys /tmp/%u.keys", map[string]string{"authorizedkeysfile": ".ssh/authorized_keys /tmp/%u.keys"}), root, "privilege", "/tmp/%u.keys"},
		// The login's sessions.
		{"ForceCommand for root", conf("Match User root\n  ForceCommand /bin/true", map[string]string{"forcecommand": "/bin/true"}), root, "lockout", "ForceCommand /bin/true"},
		{"ChrootDirectory for root", conf("ChrootDirectory /var/empty", map[string]string{"chrootdirectory": "/var/empty"}), root, "lockout", "ChrootDirectory /var/empty"},
		{"ForceCommand for sftp users only", conf("Match Group sftponly\n  ForceCommand internal-sftp", nil), root, "", ""},
	}
	runJudgeCases(t, tests)
}

// TestEffectsPolicyWithSSH: the facts of the worker's connection fill the
// policy; those not known leave it as it was.
func TestEffectsPolicyWithSSH(t *testing.T) {
	base := EffectsPolicy{Login: "deploy", SSHPort: 2222, HostKeyAlgorithms: []string{"ssh-ed25519"}}
	tests := []struct {
		name  string
		pol   EffectsPolicy
		facts nightshift.SSHFacts
		want  EffectsPolicy
	}{
		{"nothing known", base, nightshift.SSHFacts{}, base},
		{"every fact", EffectsPolicy{Login: "deploy"}, nightshift.SSHFacts{HostKeyAlgorithms: []string{"rsa-sha2-256", "rsa-sha2-512"}, KeyAlgorithm: "rsa-sha2-256",
			KeyAlgorithms: []string{"rsa-sha2-256", "rsa-sha2-512", "ssh-rsa"}, Server: netip.MustParseAddrPort("[::ffff:192.0.2.1]:2200"), Local: netip.MustParseAddrPort("192.0.2.7:40000")},
			EffectsPolicy{Login: "deploy", SSHPort: 2200, SSHAddr: netip.MustParseAddr("192.0.2.1"), SSHFrom: netip.MustParseAddr("192.0.2.7"), HostKeyAlgorithms: []string{"rsa-sha2-256", "rsa-sha2-512"}, KeyAlgorithms: []string{"rsa-sha2-256"}}},
		{"through a jump host (no server address), the configured port kept", base, nightshift.SSHFacts{KeyAlgorithm: "ssh-ed25519", Server: netip.AddrPort{}},
			EffectsPolicy{Login: "deploy", SSHPort: 2222, HostKeyAlgorithms: []string{"ssh-ed25519"}, KeyAlgorithms: []string{"ssh-ed25519"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.pol.WithSSH(tc.facts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("WithSSH = %+v, want %+v", got, tc.want)
			}
		})
	}
}
