package providertest

// Injectors is a table of the failures a fake vendor can simulate, each
// with what makes the fake fail its next send with it, such as
//
//	FailNext: providertest.Injectors{
//		providertest.Permanent:  func() { vendor.FailNext(fake.InvalidNumber) },
//		providertest.AnswerLost: vendor.BreakNext,
//	}.Inject,
//
// in place of a switch over Failure in each harness.
type Injectors map[Failure]func()

// Inject makes the fake fail its next send with f and reports whether it
// can simulate f: a Harness.FailNext.
func (in Injectors) Inject(f Failure) bool {
	inject, ok := in[f]
	if ok {
		inject()
	}
	return ok
}
