package fleet_test

import (
	"github.com/stretchr/testify/mock"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/inventory"
)

type inventoryHost = inventory.Host

var mockAny = mock.Anything

type budgetModel = budget.Model
