package distill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyError(t *testing.T) {
	tests := []struct {
		name   string
		output string
		exit   int
		want   []Class
	}{
		{"apt not root", "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?", 100, []Class{classNotRoot}},
		{"sudo password", "sudo: a password is required", 1, []Class{classSudoPassword}},
		{"dpkg lock", "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)", 100, []Class{classDpkgLock}},
		{"rpm lock", "Another app is currently holding the yum lock; waiting for it to exit...", 1, []Class{classRPMLock}},
		{"dpkg interrupted", "E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem.", 100, []Class{classDpkgInterrupted}},
		{"apt unknown package", "E: Unable to locate package libpam-cracklib", 100, []Class{classPackageNotFound}},
		{"dnf no match", "No match for argument: aide-dynamic\nError: Unable to find a match: aide-dynamic", 1, []Class{classPackageNotFound}},
		{"unmet deps", "The following packages have unmet dependencies:\n aide : Depends: aide-common (= 0.18.3-1) but it is not going to be installed", 100, []Class{classUnmetDeps}},
		{"repo unreachable", "Err:1 http://mirror.internal.invalid/debian bookworm InRelease\n  Temporary failure resolving 'mirror.internal.invalid'", 100, []Class{classRepoUnreachable}},
		{"dpkg error", "dpkg: error processing package aide-common (--configure):", 1, []Class{classDpkgError}},
		{"sed expression", "sed: -e expression #1, char 42: unterminated `s' command", 1, []Class{classSedExpression}},
		{"unit not found", "Failed to restart sshd.service: Unit sshd.service not found.", 5, []Class{classUnitNotFound}},
		{"unit masked", "Failed to start aidecheck.service: Unit aidecheck.service is masked.", 1, []Class{classUnitMasked}},
		{"unit failed", "Job for ssh.service failed because the control process exited with error code.", 1, []Class{classUnitFailed}},
		{"no systemd", "System has not been booted with systemd as init system (PID 1). Can't operate.", 1, []Class{classNoSystemd}},
		{"sshd config", "/etc/ssh/sshd_config: line 33: Bad configuration option: PermitRootLogn", 255, []Class{classSSHDConfig}},
		{"sshd privsep", "Missing privilege separation directory: /run/sshd", 255, []Class{classSSHDPrivsep}},
		{"sshd host keys", "sshd: no hostkeys available -- exiting.", 1, []Class{classSSHDHostKeys}},
		{"aide config", "  ERROR: aide-bad2.conf:6: group 'bogus' is not defined (line: 'Full = p+i+bogus')", 17, []Class{classAideConfig}},
		{"aide database", "  ERROR: /etc/aide/aide.conf:10: open (read-only) failed for file '/var/lib/aide/aide.db': No such file or directory (line: 'database_in=file:/var/lib/aide/aide.db')", 18, []Class{classAideDatabase}},
		{"aide 0.16 database", "Couldn't open file /var/lib/aide/aide.db.gz for reading", 17, []Class{classAideDatabase}},
		{"aide changes", "AIDE found differences between database and filesystem!!", 5, []Class{classAideChanges}},
		{"augeas", "error: Failed to execute command\nsaving failed (run 'errors' for details)", 1, []Class{classAugeasError}},
		{"read-only", "sed: couldn't open temporary file /etc/sedX1: Read-only file system", 4, []Class{classReadOnly}},
		{"disk full", "cp: error writing '/var/lib/aide/aide.db': No space left on device", 1, []Class{classDiskFull}},
		{"permission denied", "find: '/proc/1/fd': Permission denied\nfind: '/root': Permission denied", 1, []Class{classPermissionDenied}},
		{"no such file", "sed: can't read /etc/nope: No such file or directory", 2, []Class{classNoSuchFile}},
		{"command not found", "bash: line 1: authselect: command not found", 127, []Class{classCommandNotFound}},
		{"dash not found", "sh: 1: grubby: not found", 127, []Class{classCommandNotFound}},
		{"timeout text", "ssh: connect to host 10.0.0.5 port 22: Connection timed out", 255, []Class{classTimeout}},
		{"killed text", "bash: line 1: 9120 Killed                  aide --init", 137, []Class{classKilled}},
		{"exit 124 alone", "", 124, []Class{classTimeout}},
		{"exit 126 alone", "", 126, []Class{classPermissionDenied}},
		{"exit 127 alone", "", 127, []Class{classCommandNotFound}},
		{"exit 137 alone", "", 137, []Class{classKilled}},
		{"order of appearance, deduplicated", "sed: can't read /a: No such file or directory\nbash: x: command not found\nsed: can't read /b: No such file or directory", 1, []Class{classNoSuchFile, classCommandNotFound}},
		{"clean output", "Reading package lists...\nDone", 0, nil},
		{"exit 0 adds nothing", "", 0, nil},
	}
	covered := map[Class]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ClassifyError(tt.output, tt.exit), "ClassifyError(%q, %d)", tt.output, tt.exit)
		})
		for _, c := range tt.want {
			covered[c] = true
		}
	}
	for _, c := range Classes() {
		assert.True(t, covered[c], "class %q has no test case", c)
	}
}

// TestClassifyOutputs reads the real tool outputs of testdata/outputs: each
// must yield the classes its tool's messages name.
func TestClassifyOutputs(t *testing.T) {
	tests := []struct {
		file string
		want []Class // must be among the classes found
	}{
		{"apt-get-install-dpkg-lock.txt", []Class{classDpkgLock}},
		{"apt-get-install-unable-to-locate.txt", []Class{classPackageNotFound}},
		{"apt-get-install-dpkg-interrupted.txt", []Class{classDpkgInterrupted}},
		{"apt-get-not-root.txt", []Class{classNotRoot}},
		{"apt-get-update-failed-fetch.txt", []Class{classRepoUnreachable}},
		{"dpkg-configure-a.txt", []Class{classDpkgError}},
		{"dpkg-install-postinst-failed.txt", []Class{classDpkgError}},
		{"sshd-t-errors.txt", []Class{classSSHDConfig}},
		{"aide-check-no-database.txt", []Class{classAideDatabase}},
		{"aide-config-error.txt", []Class{classAideConfig}},
		{"aide-check-changes.txt", []Class{classAideChanges}},
		{"aide-init-timeout-killed.txt", []Class{classTimeout, classKilled}},
		{"augtool-errors.txt", []Class{classAugeasError}},
		{"sed-errors.txt", []Class{classSedExpression, classNoSuchFile}},
		{"find-permission-denied.txt", []Class{classPermissionDenied}},
		{"systemctl-no-systemd.txt", []Class{classNoSystemd}},
		{"systemctl-status-sshd-failed.txt", []Class{classUnitFailed, classSSHDConfig}},
		{"journalctl-u-ssh.txt", []Class{classSSHDConfig, classUnitFailed}},
		{"dnf-install-no-match.txt", []Class{classPackageNotFound, classRepoUnreachable}},
		{"yum-install-lock.txt", []Class{classRPMLock}},
		{"command-not-found.txt", []Class{classCommandNotFound}},
		{"apt-get-install-success.txt", nil},
		{"aide-init.txt", nil},
		{"ls-la-etc.txt", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "outputs", tt.file))
			require.NoError(t, err)
			got := ClassifyError(string(b), 0)
			if tt.want == nil {
				assert.Empty(t, got, "clean output")
			}
			assert.Subset(t, got, tt.want)
		})
	}
}

func TestOutputsFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "outputs", "*.txt"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(files), 25, "outputs")
	readme, err := os.ReadFile(filepath.Join("..", "testdata", "outputs", "README.md"))
	require.NoError(t, err)
	for _, f := range files {
		if !strings.Contains(string(readme), filepath.Base(f)) {
			t.Errorf("README.md does not describe %s", filepath.Base(f))
		}
	}
}
