package inventory_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/inventory"
)

func Example() {
	inv, err := inventory.ParseINI("hosts.ini", []byte(`
[web]
web[01:02].example.com ansible_user=deploy

[db]
db1 ansible_host=10.0.0.5 ansible_port=2222

[prod:children]
web
db
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	hosts, err := inv.Select("prod", "!db1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hosts {
		fmt.Println(h.Name, h.Destination(), h.Groups)
	}
	db, _ := inv.Host("db1")
	fmt.Println(db.Destination())

	_, err = inventory.ParseINI("bad.ini", []byte("[web]\nweb[9:1]\n"))
	fmt.Println(err)
	// Output:
	// web01.example.com deploy@web01.example.com [prod web]
	// web02.example.com deploy@web02.example.com [prod web]
	// 10.0.0.5:2222
	// inventory bad.ini:2: invalid host range: "web[9:1]": start 9 is after end 1
}
