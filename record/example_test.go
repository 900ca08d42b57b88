package record_test

import (
	"fmt"

	"github.com/notifykit/notify/record"
)

// Amounts are parsed and printed exactly, in minor units.
func ExampleParseMoney() {
	price, err := record.ParseMoney("0.25", record.INR())
	if err != nil {
		panic(err)
	}
	fmt.Println(price.Minor, price)
	// Output: 25 0.25 INR
}

// CanMove is the one definition of the state machine every store applies.
func ExampleCanMove() {
	fmt.Println(record.CanMove(record.StateAttempting, record.StateSent))
	fmt.Println(record.CanMove(record.StateSent, record.StateAttempting))
	// Output:
	// true
	// false
}
