-- 0019: e-mail recipients on the suppression lists in their one canonical
-- form (email.Recipient): lower case, with the domain in ASCII (IDNA
-- A-labels). Before it, a list kept an internationalised domain as it was
-- written ("ann@bücher.example"), and a send spelling it in ASCII
-- ("ann@xn--bcher-kva.example") did not find the entry. The conversion
-- (UTS #46 and punycode) is Go's, not SQL's: the step is
-- canonicalEmailSuppressions (pgstore/canonical.go), which runs right
-- after this file, in the same transaction. Two entries that become one
-- keep the stronger reason, as AddSuppression would.
SELECT 1;
