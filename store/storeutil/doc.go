// Package storeutil holds helpers for the authors of stores: what every
// store must do alike, done once, so that two stores answer the same
// call the same way. Package store is the contract alone; a store calls
// these from its methods.
//
// The suppression list's rules: CheckSuppression checks an entry,
// CheckSuppressionKey and CheckSuppressionKeys a lookup or a removal. A
// recipient arrives in its channel's canonical form
// (notify.Channel.Recipient) and is kept as it is: the store checks only
// the shape every form has. memstore and pgstore call them first in each
// store.Suppressions method, and storetest.RunSuppressions holds a store
// to their answers.
//
// The rest read a contract's rule for the store that keeps it:
// Repricing and RepriceMismatch (a store.Update's Reprice), Older (the
// order of store.Admin.Messages), PageSize (a store.SuppressionQuery's
// Limit), and CloneAccount and CloneTemplate (the copies a store hands
// out, so that a caller's changes never reach it).
package storeutil
