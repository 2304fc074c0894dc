package catalog

import ()

// DatabaseOID is the OID lockd gives its one database, as the "postgres"
// database has in a fresh PostgreSQL cluster. Lock tags carry it.
const DatabaseOID = 5
