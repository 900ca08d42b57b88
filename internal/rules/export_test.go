package rules

// Custom and Aliases let the external tests, which check the channels'
// request types (importing them here would be a cycle), see every rule.
var Custom, Aliases = custom, aliases
