package fleet_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/inventory"
)

// A night's input: the rules files' text, the hosts with their zones, and
// the model fixed at start. Validate refuses bad input before anything
// runs; each host's workflow goes to its zone's task queue.
func Example() {
	n := fleet.Night{
		Name: "nightly",
		RuleFiles: []fleet.RuleFile{{Name: "ssh.yaml", Data: []byte(`rules:
  - {id: sshd_root_login, title: Disable root login, check: "grep -q '^PermitRootLogin no' /etc/ssh/sshd_config"}
`)}},
		Hosts: []inventory.Host{
			{Name: "web1", Address: "10.0.0.5"},
			{Name: "pay1", Address: "10.9.0.5", Vars: map[string]string{fleet.ZoneVar: "pci"}},
		},
		Model: fleet.ModelSpec{Name: "Qwen/Qwen3-8B", Tokenizer: "qwen3", ContextWindow: 16384, MaxTokens: 1024},
	}
	fmt.Println(n.Validate())
	for _, h := range n.Hosts {
		fmt.Println(h.Name, fleet.ZoneQueue(fleet.ZoneOf(h)))
	}
	n.RuleIDs = []string{"sshd_permit_empty"}
	fmt.Println(n.Validate())
	// Output:
	// <nil>
	// web1 nightshift-zone-default
	// pay1 nightshift-zone-pci
	// invalid fleet night: rule "sshd_permit_empty" is in none of the rule files
}
