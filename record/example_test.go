package record_test

import (
	"fmt"

	"github.com/notifykit/notify/record"
)

// Money is exact: int64 minor units, parsed and printed without floats.
func ExampleParseMoney() {
	m, err := record.ParseMoney("1234.5", record.INR())
	fmt.Println(m.Minor, m, err)
	_, err = record.ParseMoney("0.125", record.INR())
	fmt.Println(err)
	// Output:
	// 123450 1234.50 INR <nil>
	// notify: parse money "0.125": more than 2 decimal places
}

// CanMove is the one definition of the state machine every store applies.
func ExampleCanMove() {
	fmt.Println(record.CanMove(record.StateAttempting, record.StateSent))
	fmt.Println(record.CanMove(record.StateSent, record.StateAttempting))
	// Output:
	// true
	// false
}
