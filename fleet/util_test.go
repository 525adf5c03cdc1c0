package fleet_test

import (
	"github.com/stretchr/testify/mock"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/served"
)

type inventoryHost = inventory.Host

var mockAny = mock.Anything

type servedModel = served.Model
