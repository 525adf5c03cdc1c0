package recipes_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/recipes"
)

// A fix proven on one host is the recipe its key's next host replays; a
// replay that fails demotes it, and the key has none until another fix is
// proved.
func Example() {
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	store := recipes.NewMemory(func() time.Time { return at })
	key := nightshift.RecipeKey{Rule: "sshd_set_idle_timeout", OS: "debian", Version: "12", PackageManager: "apt-get"}
	fix := nightshift.Recipe{Key: key, Commands: []string{"printf 'ClientAliveInterval 300\\n' >> /etc/ssh/sshd_config"},
		Check: nightshift.RecipeCheck{Command: "sshd -T | grep -qx 'clientaliveinterval 300'"}}
	for _, host := range []string{"web1", "web2"} {
		if _, err := store.Prove(ctx, fix, nightshift.RecipeProof{Host: host, Run: "1", Check: "pass"}); err != nil {
			fmt.Println(err)
		}
	}
	r, ok, _ := store.Best(ctx, key)
	fmt.Println(ok, r.ID == nightshift.RecipeID(key.Rule, fix.Commands), r.Fixes, r.State)
	_ = store.Fail(ctx, r.ID, key, "re-check fail: exit 1")
	_, ok, _ = store.Best(ctx, key)
	list, _ := store.List(ctx, recipes.Filter{Rule: key.Rule})
	fmt.Println(ok, list[0].State, list[0].LastError)
	// Output:
	// true true 2 active
	// false demoted re-check fail: exit 1
}
