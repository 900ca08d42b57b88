package world_test

import (
	"fmt"

	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/phone/world"
)

func Example() {
	for _, raw := range []string{"+1 415 555 0100", "9876543210", "+44 909 876 5432"} {
		n, err := phone.Parse(raw, "IN", world.Plan{})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(n.E164, n.Region, n.Type, n.Type.TakesSMS())
	}
	// Output:
	// +14155550100 US fixed-line or mobile true
	// +919876543210 IN mobile true
	// +449098765432 GB premium-rate false
}
