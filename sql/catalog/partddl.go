package catalog

import ()

// lockTableDescendants lists what LOCK TABLE t locks besides t: every
// descendant, unless ONLY (inh false).
func (c *CatalogState) LockTableDescendants(t *TableDef, inh bool) []*TableDef {
	if !inh {
		return nil
	}
	return c.Inheritors(t)
}
