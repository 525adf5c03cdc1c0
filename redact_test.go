package nightshift_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"golang.org/x/crypto/ssh"
)

// Real-looking crypt(3) hashes (openssl passwd -6; a yescrypt hash's form).
const (
	sha512Hash   = "$6$abcdefgh$oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt/tMCPvjE87aPyrlQPEKxEcxV6d4J6."
	yescryptHash = "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7"
	grubHash     = "grub.pbkdf2.sha512.10000.9AC3F1C2D0A1B2C3.4F5E6D7C8B9A0F1E2D3C4B5A69788776"
)

// testKeys are a freshly generated ed25519 key as an OpenSSH private key,
// as PKCS#8 PEM, and its public key in authorized_keys form.
func testKeys(t *testing.T) (openssh, pkcs8, pub string) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(sk, "test")
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	spk, err := ssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(blk)), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spk))) + " test"
}

// udiff is a unified diff of p replacing the lines old by new (after a
// context line).
func udiff(p string, ctx string, old, new []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- a%s\n+++ b%s\n@@ -1,%d +1,%d @@\n", p, p, len(old)+1, len(new)+1)
	if ctx != "" {
		b.WriteString(" " + ctx + "\n")
	}
	for _, l := range old {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range new {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// lines splits a key into its lines.
func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func TestEffectsRedacted(t *testing.T) {
	openssh, pkcs8, pub := testKeys(t)
	_, pkcs8b, _ := testKeys(t)
	reg := func(mode uint32, sum string) nightshift.FileState {
		return nightshift.FileState{Kind: nightshift.FileRegular, Mode: mode, SHA256: sum}
	}
	mod := func(p string, mode uint32, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeModified, Before: reg(mode, "aaaa"), After: reg(mode, "bbbb"), Diff: diff}
	}
	keyMarker := func(why string) string {
		return "[secret contents not shown (" + why + "); sha256 before aaaa, after bbbb]"
	}
	tests := []struct {
		name   string
		change nightshift.FileChange
		// want is the redacted diff ("" : the diff unchanged).
		want string
		// secrets must not be in the redacted diff.
		secrets []string
	}{
		{
			name: "root's sha512 hash replaced by yescrypt",
			change: mod("/etc/shadow", 0o640, udiff("/etc/shadow", "daemon:*:19000:0:99999:7:::",
				[]string{"root:" + sha512Hash + ":19000:0:99999:7:::"}, []string{"root:" + yescryptHash + ":19001:0:99999:7:::"})),
			want: udiff("/etc/shadow", "daemon:<locked (*)>:19000:0:99999:7:::",
				[]string{"root:<password hash $6$>:19000:0:99999:7:::"}, []string{"root:<password hash changed, $y$>:19001:0:99999:7:::"}),
			secrets: []string{sha512Hash, yescryptHash, "oGoxMtcz", "X3DX6M94"},
		},
		{
			name: "password blanked",
			change: mod("/etc/shadow", 0o640, udiff("/etc/shadow", "",
				[]string{"root:" + yescryptHash + ":19000:0:99999:7:::"}, []string{"root::19000:0:99999:7:::"})),
			want: udiff("/etc/shadow", "",
				[]string{"root:<password hash $y$>:19000:0:99999:7:::"}, []string{"root:<blank password>:19000:0:99999:7:::"}),
			secrets: []string{yescryptHash},
		},
		{
			name: "account locked with ! (usermod -L), hash kept",
			change: mod("/etc/shadow", 0o640, udiff("/etc/shadow", "",
				[]string{"alice:" + sha512Hash + ":19000:0:99999:7:::"}, []string{"alice:!" + sha512Hash + ":19000:0:99999:7:::"})),
			want: udiff("/etc/shadow", "",
				[]string{"alice:<password hash $6$>:19000:0:99999:7:::"}, []string{"alice:<locked (!), password hash unchanged, $6$>:19000:0:99999:7:::"}),
			secrets: []string{sha512Hash},
		},
		{
			name: "password aged only (chage), hash unchanged",
			change: mod("/etc/shadow", 0o640, udiff("/etc/shadow", "",
				[]string{"root:" + yescryptHash + ":19000:0:99999:7:::"}, []string{"root:" + yescryptHash + ":19000:1:365:7:::"})),
			want: udiff("/etc/shadow", "",
				[]string{"root:<password hash $y$>:19000:0:99999:7:::"}, []string{"root:<password hash unchanged, $y$>:19000:1:365:7:::"}),
			secrets: []string{yescryptHash},
		},
		{
			name: "locked with * and !!, gshadow",
			change: mod("/etc/gshadow", 0o640, udiff("/etc/gshadow", "",
				[]string{"adm:!!::", "sudo:" + sha512Hash + "::alice"}, []string{"adm:*::", "sudo:!::alice"})),
			want: udiff("/etc/gshadow", "",
				[]string{"adm:<locked (!!)>::", "sudo:<password hash $6$>::alice"}, []string{"adm:<locked (*)>::", "sudo:<locked (!)>::alice"}),
			secrets: []string{sha512Hash},
		},
		{
			name: "a backup of shadow created by a command",
			change: nightshift.FileChange{Path: "/etc/shadow.bak", Change: nightshift.ChangeCreated, After: reg(0o640, "bbbb"),
				Diff: udiff("/etc/shadow.bak", "", nil, []string{"root:" + sha512Hash + ":19000:0:99999:7:::"})},
			want:    udiff("/etc/shadow.bak", "", nil, []string{"root:<password hash $6$>:19000:0:99999:7:::"}),
			secrets: []string{sha512Hash},
		},
		{
			name: "opasswd's old hashes",
			change: mod("/etc/security/opasswd", 0o600, udiff("/etc/security/opasswd", "",
				[]string{"root:0:1:" + sha512Hash}, []string{"root:0:2:" + sha512Hash + "," + yescryptHash})),
			want: udiff("/etc/security/opasswd", "",
				[]string{"root:0:1:<1 old password hashes>"}, []string{"root:0:2:<2 old password hashes, changed>"}),
			secrets: []string{sha512Hash, yescryptHash},
		},
		{
			name: "a hash in a script is masked, the rest of the line kept",
			change: nightshift.FileChange{Path: "/usr/local/sbin/setpw", Change: nightshift.ChangeCreated, After: reg(0o755, "bbbb"),
				Diff: udiff("/usr/local/sbin/setpw", "", nil, []string{"usermod -p '" + sha512Hash + "' root"})},
			want:    udiff("/usr/local/sbin/setpw", "", nil, []string{"usermod -p '<password hash $6$>' root"}),
			secrets: []string{sha512Hash},
		},
		{
			name: "GRUB password hash",
			change: mod("/etc/grub.d/40_custom", 0o755, udiff("/etc/grub.d/40_custom", "set superusers=\"root\"",
				nil, []string{"password_pbkdf2 root " + grubHash})),
			want: udiff("/etc/grub.d/40_custom", "set superusers=\"root\"",
				nil, []string{"password_pbkdf2 root <password hash grub.pbkdf2>"}),
			secrets: []string{grubHash, "9AC3F1C2"},
		},
		{
			name:    "SSH host key rotated",
			change:  mod("/etc/ssh/ssh_host_ed25519_key", 0o600, udiff("/etc/ssh/ssh_host_ed25519_key", "", lines(openssh), lines(openssh))),
			want:    keyMarker("SSH host private key"),
			secrets: lines(openssh)[1:3],
		},
		{
			name:    "root's own private key",
			change:  mod("/root/.ssh/id_ed25519", 0o600, udiff("/root/.ssh/id_ed25519", "", nil, lines(openssh))),
			want:    keyMarker("SSH private key"),
			secrets: lines(openssh)[1:3],
		},
		{
			name:    "a PEM private key in any file, whatever its mode",
			change:  mod("/opt/app/config.yaml", 0o644, udiff("/opt/app/config.yaml", "tls:", lines(pkcs8), lines(pkcs8b))),
			want:    keyMarker("holds a private key"),
			secrets: []string{lines(pkcs8)[1], lines(pkcs8b)[1]},
		},
		{
			name:    "an OpenSSH private key without its header line in the diff context",
			change:  mod("/srv/deploy/creds", 0o644, udiff("/srv/deploy/creds", "", nil, lines(openssh)[1:])),
			want:    keyMarker("holds a private key"),
			secrets: lines(openssh)[1:3],
		},
		{
			name:    "a keytab",
			change:  mod("/etc/krb5.keytab", 0o600, "--- a/etc/krb5.keytab\n+++ b/etc/krb5.keytab\n@@ -1 +1 @@\n-k1\n+k2\n"),
			want:    keyMarker("Kerberos keytab"),
			secrets: []string{"k1", "k2"},
		},
		{
			name:    "chap-secrets",
			change:  mod("/etc/ppp/chap-secrets", 0o600, udiff("/etc/ppp/chap-secrets", "", nil, []string{"alice * s3cretPPP *"})),
			want:    keyMarker("credential file"),
			secrets: []string{"s3cretPPP"},
		},
		{
			name:    "an owner-only file in a home",
			change:  mod("/home/alice/.netrc", 0o600, udiff("/home/alice/.netrc", "", nil, []string{"machine db login alice password hunter2"})),
			want:    keyMarker("private file in a home"),
			secrets: []string{"hunter2"},
		},
		{
			name:   "a public key is not secret",
			change: mod("/root/.ssh/authorized_keys", 0o600, udiff("/root/.ssh/authorized_keys", "", nil, []string{pub})),
		},
		{
			name:   "a .pub file is not secret",
			change: mod("/etc/ssh/ssh_host_ed25519_key.pub", 0o644, udiff("/etc/ssh/ssh_host_ed25519_key.pub", "", []string{pub}, []string{pub + "2"})),
		},
		{
			name:   "owner-only configuration in /etc is shown",
			change: mod("/etc/ssh/sshd_config", 0o600, udiff("/etc/ssh/sshd_config", "Port 22", []string{"PermitRootLogin yes"}, []string{"PermitRootLogin no"})),
		},
		{
			name: "a shell variable that is not a hash",
			change: mod("/etc/profile.d/x.sh", 0o644, udiff("/etc/profile.d/x.sh", "", nil,
				[]string{`echo "$1" "$6"`, "PS1='$ '"})),
		},
		{
			name:   "no diff",
			change: nightshift.FileChange{Path: "/etc/shadow", Change: nightshift.ChangeMeta, Before: reg(0o644, "aaaa"), After: reg(0o640, "aaaa")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.change
			e := nightshift.Effects{Changes: []nightshift.FileChange{raw}}
			got := e.Redacted()
			want := tt.want
			if want == "" {
				want = raw.Diff
			}
			if got.Changes[0].Diff != want {
				t.Errorf("redacted diff:\n%s\nwant:\n%s", got.Changes[0].Diff, want)
			}
			if e.Changes[0].Diff != raw.Diff {
				t.Error("Redacted changed the raw effects")
			}
			js, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.secrets {
				if strings.Contains(got.Changes[0].Diff, s) || strings.Contains(string(js), s) || strings.Contains(got.Summary(0), s) {
					t.Errorf("secret %q left in the redacted effects", s)
				}
			}
			if again := got.Redacted(); again.Changes[0].Diff != got.Changes[0].Diff {
				t.Errorf("Redacted is not idempotent:\n%s\nthen\n%s", got.Changes[0].Diff, again.Changes[0].Diff)
			}
		})
	}
}

func TestEvidenceRedactedActionsAndReasons(t *testing.T) {
	ev := nightshift.Evidence{
		Effects: nightshift.Effects{Actions: []nightshift.RecordedAction{{Argv: []string{"chpasswd", "-e", "root:" + sha512Hash}}},
			// A parser's message may quote the line it rejects.
			Parses: []nightshift.ConfigParse{{Program: "visudo -c", File: "/etc/sudoers",
				BeforeMessage: "syntax error\nx " + sha512Hash, Message: "syntax error\ny " + yescryptHash}}},
		Reasons: []string{"refused: root:" + yescryptHash},
	}
	got := ev.Redacted()
	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{sha512Hash, yescryptHash} {
		if strings.Contains(string(js), s) {
			t.Errorf("hash left in %s", js)
		}
	}
	if !strings.Contains(string(js), `"parses":[{"program":"visudo -c","file":"/etc/sudoers","before_ok":false`) {
		t.Errorf("the evidence's JSON (the journal's, the reports') does not carry the parse checks: %s", js)
	}
	if p := got.Effects.Parses[0]; p.Program != "visudo -c" || !strings.HasPrefix(p.Message, "syntax error\ny <password hash") {
		t.Errorf("parse check redacted to %+v", p)
	}
	if ev.Effects.Parses[0].Message != "syntax error\ny "+yescryptHash {
		t.Error("Redacted changed the raw parse checks")
	}
	if ev.Effects.Actions[0].Argv[2] != "root:"+sha512Hash {
		t.Error("Redacted changed the raw actions")
	}
	if want := "chpasswd -e 'root:<password hash $6$>'"; got.Effects.Actions[0].String() != want {
		t.Errorf("action %q, want %q", got.Effects.Actions[0].String(), want)
	}
}

// FuzzRedacted: whatever the diff, Redacted neither panics nor leaves a
// line holding a crypt hash or a private key's header, and is idempotent.
func FuzzRedacted(f *testing.F) {
	f.Add("/etc/shadow", "-root:"+sha512Hash+":1::::::\n+root::1::::::\n")
	f.Add("/opt/x", "+-----BEGIN OPENSSH PRIVATE KEY-----\n")
	f.Add("/etc/security/opasswd", "+root:0:1:"+yescryptHash+"\n")
	f.Add("/etc/gshadow", "+:\n-\n+\n")
	f.Fuzz(func(t *testing.T, p, diff string) {
		e := nightshift.Effects{Changes: []nightshift.FileChange{{Path: p, Change: nightshift.ChangeModified, Diff: diff}}}
		got := e.Redacted()
		d := got.Changes[0].Diff
		if strings.Contains(d, "PRIVATE KEY-----") {
			t.Errorf("private key header left: %q", d)
		}
		for _, h := range []string{sha512Hash, yescryptHash} {
			if strings.Contains(d, h) {
				t.Errorf("hash left: %q", d)
			}
		}
		if again := got.Redacted().Changes[0].Diff; again != d {
			t.Errorf("not idempotent: %q then %q", d, again)
		}
	})
}

func ExampleEffects_Redacted() {
	e := nightshift.Effects{Changes: []nightshift.FileChange{{
		Path: "/etc/shadow", Change: nightshift.ChangeModified,
		Diff: "--- a/etc/shadow\n+++ b/etc/shadow\n@@ -1 +1 @@\n" +
			"-root:$6$abcdefgh$oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt/tMCPvjE87aPyrlQPEKxEcxV6d4J6.:19000:0:99999:7:::\n" +
			"+root::19000:0:99999:7:::\n",
	}}}
	fmt.Println(e.Redacted().Summary(0))
	// Output:
	// changed /etc/shadow: -root:<password hash $6$>:19000:0:99999:7::: +root:<blank password>:19000:0:99999:7:::
}

// TestRedactText: the secrets a command's text or output may hold are
// masked, the rest of the text stays.
func TestRedactText(t *testing.T) {
	openssh, pkcs8, pub := testKeys(t)
	rsaLike := "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D4E5F60718293A4B5C6D7E8F9\n\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n-----END RSA PRIVATE KEY-----\n"
	tests := []struct {
		name, in string
		want     string   // "" when only secrets and keep matter
		secrets  []string // must not be left
		keep     []string // must be left
	}{
		{name: "grep of shadow", in: "root:" + sha512Hash + ":19000:0:99999:7:::\n", want: "root:<password hash $6$>:19000:0:99999:7:::\n"},
		{name: "usermod -p", in: "usermod -p '" + yescryptHash + "' root", want: "usermod -p '<password hash $y$>' root"},
		{name: "chpasswd -e", in: "echo 'root:" + sha512Hash + "' | chpasswd -e", want: "echo 'root:<password hash $6$>' | chpasswd -e"},
		{name: "grub password", in: "password_pbkdf2 root " + grubHash + "\n", want: "password_pbkdf2 root <password hash grub.pbkdf2>\n"},
		{name: "cat of an OpenSSH key", in: "key:\n" + openssh + "done\n", secrets: lines(openssh), keep: []string{"key:\n[OPENSSH private key not shown]", "done\n"}},
		{name: "PKCS#8 key in stderr", in: pkcs8, secrets: lines(pkcs8)[1:], keep: []string{"[private key not shown]"}},
		{name: "encrypted PEM key", in: rsaLike, secrets: []string{"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn", "AES-128-CBC,0A1B2C3D"}, keep: []string{"[RSA private key not shown]"}},
		{name: "a key cut before its END line", in: "x " + strings.Join(lines(openssh)[:3], "\n") + "\n[… 100 bytes cut …]", secrets: lines(openssh)[1:3], keep: []string{"x [OPENSSH private key not shown]", "[… 100 bytes cut …]"}},
		{name: "a key in a heredoc as JSON escapes it", in: strings.ReplaceAll("cat > k <<'E'\n"+openssh+"E", "\n", `\n`), secrets: []string{lines(openssh)[1]}, keep: []string{`cat > k <<'E'\n[OPENSSH private key not shown]\nE`}},
		{name: "public key and plain text", in: pub + "\nPermitRootLogin no $HOME\n", want: pub + "\nPermitRootLogin no $HOME\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nightshift.RedactText(tt.in)
			if tt.want != "" && got != tt.want {
				t.Errorf("RedactText = %q, want %q", got, tt.want)
			}
			for _, s := range tt.secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q left in %q", s, got)
				}
			}
			for _, s := range tt.keep {
				if !strings.Contains(got, s) {
					t.Errorf("%q lacks %q", got, s)
				}
			}
			if strings.Contains(got, "PRIVATE KEY-----") {
				t.Errorf("a private key's header or footer left in %q", got)
			}
			if again := nightshift.RedactText(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestExecRedacted(t *testing.T) {
	_, pkcs8, _ := testKeys(t)
	ex := nightshift.Exec{Stdout: "root:" + sha512Hash + ":1::::::\n", Stderr: pkcs8,
		Evidence: &nightshift.Evidence{Reasons: []string{"root:" + yescryptHash}}}
	got := ex.Redacted()
	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{sha512Hash, yescryptHash}, lines(pkcs8)...) {
		if strings.Contains(string(js), s) {
			t.Errorf("%q left in %s", s, js)
		}
	}
	if ex.Stdout != "root:"+sha512Hash+":1::::::\n" || ex.Evidence.Reasons[0] != "root:"+yescryptHash {
		t.Error("Redacted changed the raw result")
	}
}

// FuzzRedactText: whatever the text, RedactText neither panics nor leaves
// a crypt hash or a private key's header, and is idempotent.
func FuzzRedactText(f *testing.F) {
	f.Add("root:" + sha512Hash + ":1::::::\n")
	f.Add("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n")
	f.Add("x -----BEGIN PRIVATE KEY----- y -----END PRIVATE KEY----- " + grubHash)
	f.Fuzz(func(t *testing.T, s string) {
		got := nightshift.RedactText(s)
		if strings.Contains(got, "PRIVATE KEY-----") {
			t.Errorf("private key header left: %q", got)
		}
		for _, h := range []string{sha512Hash, yescryptHash, grubHash} {
			if strings.Contains(got, h) {
				t.Errorf("hash left: %q", got)
			}
		}
		if again := nightshift.RedactText(got); again != got {
			t.Errorf("not idempotent: %q then %q", got, again)
		}
	})
}
