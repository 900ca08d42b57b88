package dlt_test

import (
	"fmt"

	"github.com/notifykit/notify/template/dlt"
)

func ExampleMatch() {
	const content = "Your OTP for {#var#} is {#var#}. Valid for 10 minutes. - ACME"

	values, err := dlt.Match(content, "Your OTP for login is 482913. Valid for 10 minutes. - ACME")
	fmt.Println(values, err)

	_, err = dlt.Match(content, "Your OTP for login is 482913. Valid for 15 minutes. - ACME")
	fmt.Println(err)
	// Output:
	// [login 482913] <nil>
	// dlt: text differs from the template at character 42: expected "0 minutes. - ACME", found "5 minutes. - ACME"
}

func ExampleFill() {
	text, err := dlt.Fill("Dear {#var#}, your order {#var#} has shipped.", []string{"Asha", "A-1042"})
	fmt.Println(text, err)
	// Output: Dear Asha, your order A-1042 has shipped. <nil>
}
