package safety

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// Policies of SSG 0.1.76 Debian 12 rules as package scap derives them
// (scap's TestScopeSSGDebian12KernelArgs checks the derivation against
// the real datastream).
var (
	// grub2_mce_argument.
	mceRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/default/grub"},
		Keys: []string{"GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT", "GRUB_DISABLE_RECOVERY", KernelArgPrefix + "mce"}}
	// grub2_enable_apparmor.
	apparmorRule = EffectsPolicy{StrictScope: true, Scope: []string{"/boot/grub/grub.cfg", "/etc/default/grub", "/etc/default/grub.d"},
		Keys: []string{KernelArgPrefix + "apparmor", KernelArgPrefix + "security"}}
	// grub2_nosmap_argument_absent.
	nosmapRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/default/grub"}, Keys: []string{KernelArgPrefix + "nosmap"}}
	// mount_option_var_tmp_noexec.
	homeNosuid   = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/fstab"}, Keys: []string{"/home", `value:{"re":"^[\\s]*\\S+[\\s]+/home[\\s]+\\S+[\\s]+(\\S+)","op":"pattern match","type":"string","values":["^.*nosuid.*$"]}`}}
	varTmpNoexec = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/fstab"}, Keys: []string{"/var/tmp",
		ValueCheck{Pattern: `^[\s]*(?!#)[\S]+[\s]+/var/tmp[\s]+[\S]+[\s]+([\S]+)`, Operation: "pattern match", Values: []string{"noexec"}}.Key()}}
	// kernel_module_rds_disabled.
	rdsRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/modprobe.d", "/etc/modules-load.d"}, Keys: []string{"install", "rds"}}
)

func TestJudgeEffectsBootArgs(t *testing.T) {
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		// fresh6: another argument beside the rule's own.
		{"rootdelay beside mce", modDiff("/etc/default/grub", "+GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX mce=0 rootdelay=900\"\n"), mceRule,
			"would add rootdelay=900 to the kernel command line in /etc/default/grub: the rule's check names only mce"},
		{"systemd.mask=ssh.service beside mce", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"quiet\"\n+GRUB_CMDLINE_LINUX=\"quiet mce=0 systemd.mask=ssh.service\"\n"), mceRule, "systemd.mask=ssh.service"},
		{"an lsm list without apparmor", createdDiff("/etc/default/grub.d/50-aa.cfg", "+GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX apparmor=1 security=apparmor lsm=landlock,yama\"\n"), apparmorRule, "would add lsm=landlock,yama"},
		{"an argument removed", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"console=ttyS0 quiet\"\n+GRUB_CMDLINE_LINUX=\"quiet mce=0\"\n"), mceRule, "would remove console=ttyS0"},
		{"/etc/kernel/cmdline", modDiff("/etc/kernel/cmdline", "-root=UUID=x ro\n+root=UUID=x ro mce=0 mem=1G\n"), mceRule, "would add mem=1G"},
		{"the menu hidden", modDiff("/etc/default/grub", "+GRUB_TIMEOUT_STYLE=hidden\n+GRUB_CMDLINE_LINUX=\"mce=0\"\n"), apparmorRule, "would set GRUB_TIMEOUT_STYLE=hidden"},
		// The rule's own arguments.
		{"SSG's mce line", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\" mce=0\"\n"), mceRule, ""},
		{"mce changed in place, others kept", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"quiet mce=1\"\n+GRUB_CMDLINE_LINUX=\"quiet mce=0\"\n"), mceRule, ""},
		{"apparmor and security", createdDiff("/etc/default/grub.d/50-aa.cfg", "+GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX apparmor=1 security=apparmor\"\n"), apparmorRule, ""},
		{"nosmap removed", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"quiet nosmap\"\n+GRUB_CMDLINE_LINUX=\"quiet\"\n"), nosmapRule, ""},
		{"no strict scope", modDiff("/etc/default/grub", "+GRUB_CMDLINE_LINUX=\"mem=1G\"\n"), EffectsPolicy{Scope: mceRule.Scope}, ""},

		// fstab: the mount point's options.
		{"/var/tmp tmpfs mode=0777", modDiff("/etc/fstab", "+tmpfs /var/tmp tmpfs rw,nosuid,nodev,noexec,mode=0777 0 0\n"), varTmpNoexec,
			"would mount /var/tmp as tmpfs tmpfs rw,nosuid,nodev,noexec,mode=0777 (/etc/fstab): options mode=0777"},
		{"/var/tmp uid=1000", modDiff("/etc/fstab", "+tmpfs /var/tmp tmpfs defaults,noexec,uid=1000 0 0\n"), varTmpNoexec, "options uid=1000"},
		{"the source changed", modDiff("/etc/fstab", "-/dev/sda3 /var/tmp ext4 defaults 0 2\n+tmpfs /var/tmp tmpfs defaults,noexec 0 0\n"), varTmpNoexec, "it changes /var/tmp's file system from /dev/sda3 ext4 to tmpfs tmpfs"},
		{"noexec added", modDiff("/etc/fstab", "-/dev/sda3 /var/tmp ext4 defaults 0 2\n+/dev/sda3 /var/tmp ext4 defaults,noexec 0 2\n"), varTmpNoexec, ""},
		{"a new disk on /home, waiting for it forever (f8-097)", modDiff("/etc/fstab", " # /etc/fstab: static file system information.\n+/dev/vdb1\t/home\text4\tdefaults,nosuid,x-systemd.device-timeout=0\t0 2\n"), homeNosuid,
			"it adds /dev/vdb1 ext4, a file system the host's fstab did not mount at /home"},
		{"a new disk by UUID", modDiff("/etc/fstab", "+UUID=0a1b /home ext4 defaults,nosuid 0 2\n"), homeNosuid, "did not mount at /home"},
		{"nosuid on the disk /home already mounts (kept as context)", modDiff("/etc/fstab", " UUID=0a1b /home ext4 defaults 0 2\n+UUID=0a1b /home ext4 defaults,nosuid 0 2\n"), homeNosuid, ""},
		{"x-systemd.device-timeout added to an entry", modDiff("/etc/fstab", "-UUID=0a1b /home ext4 defaults 0 2\n+UUID=0a1b /home ext4 defaults,nosuid,x-systemd.device-timeout=0 0 2\n"), homeNosuid, "x-systemd.device-timeout=0"},
		{"x-systemd.automount added to an entry", modDiff("/etc/fstab", "-UUID=0a1b /home ext4 defaults 0 2\n+UUID=0a1b /home ext4 defaults,nosuid,x-systemd.automount 0 2\n"), homeNosuid, ""},
		{"a new entry with restricting options", modDiff("/etc/fstab", "+tmpfs /var/tmp tmpfs defaults,nodev,nosuid,noexec 0 0\n"), varTmpNoexec, ""},
		{"an option the entry had is kept", modDiff("/etc/fstab", "-tmpfs /var/tmp tmpfs size=1G 0 0\n+tmpfs /var/tmp tmpfs size=1G,noexec 0 0\n"), varTmpNoexec, ""},

		// modules-load.d for a module the rule disables.
		{"rds loaded at boot", createdDiff("/etc/modules-load.d/rds.conf", "+rds\n"), rdsRule, "would load rds at every boot (/etc/modules-load.d/rds.conf): the rule's check disables it"},
		{"the rule's install line", createdDiff("/etc/modprobe.d/rds.conf", "+install rds /bin/false\n+blacklist rds\n"), rdsRule, ""},
		{"a module loaded for a rule that does not disable it", createdDiff("/etc/modules-load.d/rds.conf", "+rds\n"), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/modules-load.d"}, Keys: []string{"rds"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}
