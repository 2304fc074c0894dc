package guc

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

const intMax = math.MaxInt32

// Category names, PostgreSQL's where PostgreSQL has the category.
const (
	catLocks        = "Lock Management"
	catStatement    = "Client Connection Defaults / Statement Behavior"
	catPlanner      = "Query Tuning / Other Planner Options"
	catPlanMethod   = "Query Tuning / Planner Method Configuration"
	catPlanCost     = "Query Tuning / Planner Cost Constants"
	catAutovacuum   = "Autovacuum"
	catLocale       = "Client Connection Defaults / Locale and Formatting"
	catConnSettings = "Connections and Authentication / Connection Settings"
	catAuth         = "Connections and Authentication / Authentication"
	catSSL          = "Connections and Authentication / SSL"
	catMemory       = "Resource Usage / Memory"
	catDisk         = "Resource Usage / Disk"
	catWALSettings  = "Write-Ahead Log / Settings"
	catCheckpoints  = "Write-Ahead Log / Checkpoints"
	catWhenLog      = "Reporting and Logging / When to Log"
	catWhatLog      = "Reporting and Logging / What to Log"
	catStats        = "Statistics / Cumulative Query and Index Statistics"
	catMonitoring   = "Statistics / Monitoring"
	catFiles        = "File Locations"
	catCompat       = "Version and Platform Compatibility / Previous PostgreSQL Versions"
	catPreset       = "Preset Options"
	catUngrouped    = "Ungrouped"
)

var (
	serverMessageLevels = []string{"debug5", "debug4", "debug3", "debug2", "debug1", "info", "notice", "warning", "error", "log", "fatal", "panic"}
	clientMessageLevels = []string{"debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"}
	isolationLevels     = []string{"serializable", "repeatable read", "read committed", "read uncommitted"}
)

//go:generate go run gen_pgsettings.go

// Table is every setting lockd knows, the single source of truth (PostgreSQL's
// guc_tables.c): lockdSettings, then every other setting of PostgreSQL 15
// (pg15Settings), which lockd accepts where PostgreSQL does and ignores. It
// must not be modified. Order matters only for lockd.conf.example, which
// lists categories in order of first appearance.
var Table = withPG15(lockdSettings, pg15Settings)

// lockdSettings are the settings lockd implements, with PostgreSQL's
// definition where PostgreSQL has the setting.
var lockdSettings = []Def{
	// --- Lock Management
	{Name: "max_locks_per_transaction", Type: Int, Boot: "64", Min: 10, Max: intMax, Context: Postmaster, Category: catLocks,
		Short: "Sets the maximum number of locks per transaction.",
		Extra: "The shared lock table is sized on the assumption that at most max_locks_per_transaction objects per server process or prepared transaction will need to be locked at any one time."},
	{Name: "fastpath_lock_slots", Type: Int, Boot: "-1", Min: -1, Max: 16384, Context: Sighup, Category: catLocks,
		Short: "Sets the number of fast-path lock slots per backend.",
		Extra: "-1 derives them from max_locks_per_transaction in groups of 16, as PostgreSQL 18 does; 0 disables the fast path. Takes effect for new sessions."},
	{Name: "lock_partitions", Type: Int, Boot: "16", Min: 1, Max: 1024, Context: Postmaster, Category: catLocks,
		Short: "Sets the number of partitions of the shared lock table.",
		Extra: "Each partition is guarded by its own LockManager lightweight lock. Must be a power of two.",
		check: checkPowerOfTwo},
	{Name: "lwlock_wakeup_rule", Type: Enum, Boot: "pg95", EnumValues: []string{"pg95", "pg84"}, Context: Sighup, Category: catLocks,
		Short: "Sets which waiters a lightweight lock release wakes.",
		Extra: "pg95: the first exclusive waiter alone, or every shared waiter in the queue (PostgreSQL 9.5 to 18). pg84: the first exclusive waiter alone, or the leading run of shared waiters (PostgreSQL 8.4, the rule the 2009 thread measured). wake_up_all_waiters and lwlock_wakeup_limit apply on top of either. Takes effect on the next release."},
	{Name: "wake_up_all_waiters", Type: Bool, Boot: "off", Context: Sighup, Category: catLocks,
		Short: "Wakes every waiter of a lightweight lock on release instead of those lwlock_wakeup_rule selects.",
		Extra: "Woken waiters race for the lock, as in the 2009 proposal for PostgreSQL 8.4. Takes effect on the next release."},
	{Name: "lwlock_wakeup_limit", Type: Int, Boot: "0", Min: 0, Max: intMax, Context: Sighup, Category: catLocks,
		Short: "Sets the maximum number of waiters woken per lightweight lock release.",
		Extra: "0 means no limit. Waiters that only wait for the lock to be free (group commit, WAL insertion waits) are always woken and not counted."},
	{Name: "deadlock_timeout", Type: Int, Unit: "ms", Boot: "1000", Min: 1, Max: intMax, Context: Superuser, Category: catLocks,
		Short: "Sets the time to wait on a lock before checking for deadlock."},
	{Name: "procarray_group_update", Type: Bool, Boot: "on", Context: Sighup, Category: catLocks,
		Short: "Lets one backend clear the transaction ids of a whole group of committing backends.",
		Extra: "PostgreSQL 9.6's group XID clearing: one ProcArrayLock acquisition per group instead of one per commit."},

	// --- Statement behaviour
	{Name: "lock_timeout", Type: Int, Unit: "ms", Boot: "0", Min: 0, Max: intMax, Context: User, Category: catStatement,
		Short: "Sets the maximum allowed duration of any wait for a lock.",
		Extra: "A value of 0 turns off the timeout."},
	{Name: "statement_timeout", Type: Int, Unit: "ms", Boot: "0", Min: 0, Max: intMax, Context: User, Category: catStatement,
		Short: "Sets the maximum allowed duration of any statement.",
		Extra: "A value of 0 turns off the timeout."},
	{Name: "idle_in_transaction_session_timeout", Type: Int, Unit: "ms", Boot: "0", Min: 0, Max: intMax, Context: User, Category: catStatement,
		Short: "Sets the maximum allowed idle time between queries, when in a transaction.",
		Extra: "A value of 0 turns off the timeout."},
	{Name: "client_min_messages", Type: Enum, Boot: "notice", EnumValues: clientMessageLevels, Context: User, Category: catStatement,
		Short: "Sets the message levels that are sent to the client.",
		Extra: "Each level includes all the levels that follow it. The later the level, the fewer messages are sent."},
	{Name: "search_path", Type: String, Boot: `"$user", public`, Context: User, Category: catStatement,
		Short: "Sets the schema search order for names that are not schema-qualified."},
	{Name: "default_transaction_isolation", Type: Enum, Boot: "read committed", EnumValues: isolationLevels, Context: User, Category: catStatement,
		Short: "Sets the transaction isolation level of each new transaction."},
	{Name: "transaction_isolation", Type: Enum, Boot: "read committed", EnumValues: isolationLevels, Context: User, Category: catStatement,
		Short: "Sets the current transaction's isolation level.",
		flags: flagNoResetAll | flagNotInSample | flagDisallowInFile},
	{Name: "default_transaction_read_only", Type: Bool, Boot: "off", Context: User, Category: catStatement, Reported: true,
		Short: "Sets the default read-only status of new transactions."},
	{Name: "transaction_read_only", Type: Bool, Boot: "off", Context: User, Category: catStatement,
		Short: "Sets the current transaction's read-only status.",
		flags: flagNoResetAll | flagNotInSample | flagDisallowInFile},
	{Name: "bytea_output", Type: Enum, Boot: "hex", EnumValues: []string{"escape", "hex"}, Context: User, Category: catStatement,
		Short: "Sets the output format for bytea."},

	{Name: "enable_seqscan", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of sequential-scan plans."},
	{Name: "enable_indexscan", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of index-scan plans."},
	{Name: "enable_indexonlyscan", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of index-only-scan plans."},
	{Name: "enable_bitmapscan", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of bitmap-scan plans."},
	{Name: "enable_nestloop", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of nested-loop join plans."},
	{Name: "enable_hashjoin", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of hash join plans."},
	{Name: "enable_mergejoin", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of merge join plans."},
	{Name: "enable_sort", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of explicit sort steps."},
	{Name: "enable_hashagg", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables the planner's use of hashed aggregation plans."},
	{Name: "enable_partition_pruning", Type: Bool, Boot: "on", Context: User, Category: catPlanMethod,
		Short: "Enables plan-time and execution-time partition pruning.",
		Extra: "Allows the query planner and executor to compare partition bounds to conditions in the query to determine which partitions must be scanned."},
	{Name: "seq_page_cost", Type: Real, Boot: "1", Min: 0, Max: math.MaxFloat64, Context: User, Category: catPlanCost,
		Short: "Sets the planner's estimate of the cost of a sequentially fetched disk page."},
	{Name: "random_page_cost", Type: Real, Boot: "4", Min: 0, Max: math.MaxFloat64, Context: User, Category: catPlanCost,
		Short: "Sets the planner's estimate of the cost of a nonsequentially fetched disk page."},
	{Name: "cpu_tuple_cost", Type: Real, Boot: "0.01", Min: 0, Max: math.MaxFloat64, Context: User, Category: catPlanCost,
		Short: "Sets the planner's estimate of the cost of processing each tuple (row)."},
	{Name: "cpu_index_tuple_cost", Type: Real, Boot: "0.005", Min: 0, Max: math.MaxFloat64, Context: User, Category: catPlanCost,
		Short: "Sets the planner's estimate of the cost of processing each index entry during an index scan."},
	{Name: "cpu_operator_cost", Type: Real, Boot: "0.0025", Min: 0, Max: math.MaxFloat64, Context: User, Category: catPlanCost,
		Short: "Sets the planner's estimate of the cost of processing each operator or function call."},
	{Name: "effective_cache_size", Type: Int, Unit: "8kB", Boot: "524288", Min: 1, Max: intMax, Context: User, Category: catPlanCost,
		Short: "Sets the planner's assumption about the total size of the data caches.",
		Extra: "That is, the total size of the caches (kernel cache and shared buffers) used for PostgreSQL data files. This is measured in disk pages, which are normally 8 kB each."},
	{Name: "max_parallel_workers_per_gather", Type: Int, Boot: "2", Min: 0, Max: 1024, Context: User, Category: "Resource Usage / Asynchronous Behavior",
		Short: "Sets the maximum number of parallel processes per executor node.",
		Extra: "lockd runs every query in its session's goroutine and plans no parallel nodes whatever the value; the setting exists so that scripts made for PostgreSQL run unchanged."},
	{Name: "plan_cache_mode", Type: Enum, Boot: "auto", EnumValues: []string{"auto", "force_generic_plan", "force_custom_plan"}, Context: User, Category: catPlanner,
		Short: "Controls the planner's selection of custom or generic plan.",
		Extra: "lockd runs the same plan either way; the setting decides which relations a prepared statement's executions lock, as PostgreSQL's cached generic plans lock fewer than custom plans."},
	{Name: "default_statistics_target", Type: Int, Boot: "100", Min: 1, Max: 10000, Context: User, Category: catPlanner,
		Short: "Sets the default statistics target.",
		Extra: "This applies to table columns that have not had a column-specific target set via ALTER TABLE SET STATISTICS."},

	// --- Autovacuum
	{Name: "autovacuum", Type: Bool, Boot: "on", Context: Sighup, Category: catAutovacuum,
		Short: "Starts the autovacuum subprocess.",
		Extra: "lockd's autovacuum vacuums and analyzes tables when the autovacuum_vacuum_* and autovacuum_analyze_* thresholds say so, one worker at a time."},
	{Name: "autovacuum_naptime", Type: Int, Unit: "s", Boot: "60", Min: 1, Max: 2147483, Context: Sighup, Category: catAutovacuum,
		Short: "Time to sleep between autovacuum runs."},
	{Name: "autovacuum_vacuum_threshold", Type: Int, Boot: "50", Min: 0, Max: intMax, Context: Sighup, Category: catAutovacuum,
		Short: "Minimum number of tuple updates or deletes prior to vacuum."},
	{Name: "autovacuum_vacuum_scale_factor", Type: Real, Boot: "0.2", Min: 0, Max: 100, Context: Sighup, Category: catAutovacuum,
		Short: "Number of tuple updates or deletes prior to vacuum as a fraction of reltuples."},
	{Name: "autovacuum_vacuum_insert_threshold", Type: Int, Boot: "1000", Min: -1, Max: intMax, Context: Sighup, Category: catAutovacuum,
		Short: "Minimum number of tuple inserts prior to vacuum, or -1 to disable insert vacuums."},
	{Name: "autovacuum_vacuum_insert_scale_factor", Type: Real, Boot: "0.2", Min: 0, Max: 100, Context: Sighup, Category: catAutovacuum,
		Short: "Number of tuple inserts prior to vacuum as a fraction of reltuples."},
	{Name: "autovacuum_analyze_threshold", Type: Int, Boot: "50", Min: 0, Max: intMax, Context: Sighup, Category: catAutovacuum,
		Short: "Minimum number of tuple inserts, updates, or deletes prior to analyze."},
	{Name: "autovacuum_analyze_scale_factor", Type: Real, Boot: "0.1", Min: 0, Max: 100, Context: Sighup, Category: catAutovacuum,
		Short: "Number of tuple inserts, updates, or deletes prior to analyze as a fraction of reltuples."},

	// --- Locale and formatting
	{Name: "client_encoding", Type: String, Boot: "UTF8", Context: User, Category: catLocale, Reported: true,
		Short: "Sets the client's character set encoding.",
		Extra: "lockd speaks UTF8 only; SQL_ASCII is accepted for clients in the C locale.",
		check: checkClientEncoding},
	{Name: "DateStyle", Type: String, Boot: "ISO, MDY", Context: User, Category: catLocale, Reported: true,
		Short: "Sets the display format for date and time values.",
		Extra: "Also controls interpretation of ambiguous date inputs.",
		check: checkDateStyle},
	{Name: "IntervalStyle", Type: Enum, Boot: "postgres", EnumValues: []string{"postgres", "postgres_verbose", "sql_standard", "iso_8601"}, Context: User, Category: catLocale, Reported: true,
		Short: "Sets the display format for interval values."},
	{Name: "TimeZone", Type: String, Boot: "UTC", Context: User, Category: catLocale, Reported: true,
		Short: "Sets the time zone for displaying and interpreting time stamps.",
		check: checkTimeZone},
	{Name: "extra_float_digits", Type: Int, Boot: "1", Min: -15, Max: 3, Context: User, Category: catLocale,
		Short: "Sets the number of digits displayed for floating-point values.",
		Extra: "This affects real, double precision, and geometric data types. A zero or negative parameter value is added to the standard number of digits (FLT_DIG or DBL_DIG as appropriate). Any value greater than zero selects precise output mode."},
	{Name: "lc_messages", Type: String, Boot: "C", Context: Superuser, Category: catLocale,
		Short: "Sets the language in which messages are displayed."},

	// --- Compatibility
	{Name: "standard_conforming_strings", Type: Bool, Boot: "on", Context: User, Category: catCompat, Reported: true,
		Short: "Causes '...' strings to treat backslashes literally."},

	// --- Relation extension
	{Name: "relation_extension_mode", Type: Enum, Boot: "group", EnumValues: []string{"single", "fixed", "group"}, Context: Sighup, Category: catDisk,
		Short: "Sets how relations are extended when they need new pages.",
		Extra: "single: one page per extension (PostgreSQL before 9.6); fixed: relation_extension_blocks pages each time; group: one backend extends for itself and its waiters (PostgreSQL 9.6)."},
	{Name: "relation_extension_blocks", Type: Int, Boot: "20", Min: 1, Max: 512, Context: Sighup, Category: catDisk,
		Short: "Sets the number of pages added per extension (fixed mode) or per waiter (group mode)."},
	{Name: "relation_extension_max_blocks", Type: Int, Boot: "512", Min: 1, Max: 65536, Context: Sighup, Category: catDisk,
		Short: "Sets the maximum number of pages added by one group extension."},
	{Name: "relation_extension_fallocate_threshold", Type: Int, Boot: "8", Min: 0, Max: 65536, Context: Sighup, Category: catDisk,
		Short: "Sets the number of new pages above which an extension allocates them with fallocate instead of writing zeroes.",
		Extra: "PostgreSQL 16 uses 8."},

	// --- Connections and resources
	{Name: "listen_addresses", Type: String, Boot: "localhost", Context: Postmaster, Category: catConnSettings,
		Short: "Sets the host name or IP address(es) to listen to."},
	{Name: "port", Type: Int, Boot: "5433", Min: 1, Max: 65535, Context: Postmaster, Category: catConnSettings,
		Short: "Sets the TCP port the server listens on."},
	{Name: "max_connections", Type: Int, Boot: "100", Min: 1, Max: 262143, Context: Postmaster, Category: catConnSettings,
		Short: "Sets the maximum number of concurrent connections."},
	{Name: "max_message_size", Type: Int, Unit: "B", Boot: "67108864", Min: 1024, Max: 1073741823, Context: Sighup, Category: catConnSettings,
		Short: "Sets the largest protocol message the server accepts from a client."},
	{Name: "authentication_timeout", Type: Int, Unit: "s", Boot: "60", Min: 1, Max: 600, Context: Sighup, Category: catAuth,
		Short: "Sets the maximum allowed time to complete client authentication."},
	{Name: "password_encryption", Type: Enum, Boot: "scram-sha-256", EnumValues: []string{"md5", "scram-sha-256"}, Context: User, Category: catAuth,
		Short:       "Chooses the algorithm for encrypting passwords.",
		Extra:       "How CREATE ROLE and ALTER ROLE store a password given in clear text; one given already encrypted is stored as it is.",
		enumAliases: map[string]string{"on": "md5", "true": "md5", "yes": "md5", "1": "md5"}},
	{Name: "ssl", Type: Bool, Boot: "off", Context: Sighup, Category: catSSL,
		Short: "Enables SSL connections.",
		Extra: "An SSLRequest is answered S and the connection encrypted with crypto/tls; hostssl and hostnossl rules in the hba file tell the two apart."},
	{Name: "ssl_cert_file", Type: String, Boot: "server.crt", Context: Sighup, Category: catSSL,
		Short: "Location of the SSL server certificate file.",
		Extra: "A relative path is relative to the data directory."},
	{Name: "ssl_key_file", Type: String, Boot: "server.key", Context: Sighup, Category: catSSL,
		Short: "Location of the SSL server private key file.",
		Extra: "A relative path is relative to the data directory."},
	{Name: "ssl_ca_file", Type: String, Boot: "", Context: Sighup, Category: catSSL,
		Short: "Location of the SSL certificate authority file.",
		Extra: "When set, clients are asked for a certificate, which must be signed by one of these authorities; hba rules with clientcert=verify-ca or verify-full require one."},
	{Name: "ssl_min_protocol_version", Type: Enum, Boot: "TLSv1.2", EnumValues: []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}, Context: Sighup, Category: catSSL,
		Short: "Sets the minimum SSL/TLS protocol version to use."},
	{Name: "ssl_max_protocol_version", Type: Enum, Boot: "", EnumValues: []string{"", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}, Context: Sighup, Category: catSSL,
		Short: "Sets the maximum SSL/TLS protocol version to use.",
		Extra: "Empty: the newest Go supports."},
	{Name: "ssl_ciphers", Type: String, Boot: "HIGH:MEDIUM:+3DES:!aNULL", Context: Sighup, Category: catSSL,
		Short: "Sets the list of allowed SSL ciphers.",
		Extra: "An OpenSSL cipher list, mapped onto the TLS 1.2 cipher suites Go implements; Go does not let TLS 1.3's suites be restricted."},
	{Name: "hba_file", Type: String, Boot: "", Context: Postmaster, Category: catFiles,
		Short: "Sets the server's \"hba\" configuration file.",
		Extra: "Client authentication rules in pg_hba.conf's format, read at start-up and on every reload; a file with errors keeps the rules in force. A relative path is relative to the data directory. Empty: every connection is trusted, as initdb --auth=trust would configure."},
	{Name: "shared_buffers", Type: Int, Unit: "8kB", Boot: "16384", Min: 16, Max: 1073741823, Context: Postmaster, Category: catMemory,
		Short: "Sets the number of shared memory buffers used by the server."},
	{Name: "work_mem", Type: Int, Unit: "kB", Boot: "4096", Min: 64, Max: intMax, Context: User, Category: catMemory,
		Short: "Sets the maximum memory to be used for query workspaces.",
		Extra: "Accepted for compatibility with clients and scripts that set it; lockd does not use it."},
	// --- Write-ahead log
	{Name: "fsync", Type: Bool, Boot: "on", Context: Sighup, Category: catWALSettings,
		Short: "Forces synchronization of updates to disk.",
		Extra: "The server will use the fsync() system call in several places to make sure that updates are physically written to disk. This ensures that a database cluster will recover to a consistent state after an operating system or hardware crash."},
	{Name: "synchronous_commit", Type: Enum, Boot: "on", EnumValues: []string{"local", "remote_write", "remote_apply", "on", "off"}, Context: User, Category: catWALSettings,
		Short:       "Sets the current transaction's synchronization level.",
		Extra:       "lockd has no standbys: local, remote_write, remote_apply and on all wait for the commit record to be flushed locally; off does not wait (the WAL writer flushes within three wal_writer_delays).",
		enumAliases: map[string]string{"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off"}},
	{Name: "wal_sync_method", Type: Enum, Boot: "fdatasync", EnumValues: []string{"fsync", "fdatasync", "open_sync", "open_datasync"}, Context: Sighup, Category: catWALSettings,
		Short: "Selects the method used for forcing WAL updates to disk."},
	{Name: "full_page_writes", Type: Bool, Boot: "on", Context: Sighup, Category: catWALSettings,
		Short: "Writes full pages to WAL when first modified after a checkpoint.",
		Extra: "A page write in process during an operating system crash might be only partially written to disk.  During recovery, the row changes stored in WAL are not enough to recover.  This option writes pages when first modified after a checkpoint to WAL so full recovery is possible."},
	{Name: "wal_buffers", Type: Int, Unit: "8kB", Boot: "-1", Min: -1, Max: 262143, Context: Postmaster, Category: catWALSettings,
		Short: "Sets the number of disk-page buffers in shared memory for WAL.",
		Extra: "-1 means 1/32 of shared_buffers, at least 64kB and at most one WAL segment."},
	{Name: "wal_insert_locks", Type: Int, Boot: "8", Min: 1, Max: 1024, Context: Postmaster, Category: catWALSettings,
		Short: "Sets the number of WAL insertion locks.",
		Extra: "PostgreSQL's compile-time NUM_XLOGINSERT_LOCKS (8 since 9.4) made a setting; 1 is the single WALInsertLock of PostgreSQL before 9.4."},
	{Name: "wal_writer_delay", Type: Int, Unit: "ms", Boot: "200", Min: 1, Max: 10000, Context: Sighup, Category: catWALSettings,
		Short: "Time between WAL flushes performed in the WAL writer."},
	{Name: "wal_writer_flush_after", Type: Int, Unit: "8kB", Boot: "128", Min: 0, Max: intMax, Context: Sighup, Category: catWALSettings,
		Short: "Amount of WAL written out by WAL writer that triggers a flush."},
	{Name: "wal_recycle", Type: Bool, Boot: "on", Context: Sighup, Category: catWALSettings,
		Short: "Recycles WAL files by renaming them."},
	{Name: "commit_delay", Type: Int, Boot: "0", Min: 0, Max: 100000, Context: Superuser, Category: catWALSettings,
		Short: "Sets the delay in microseconds between transaction commit and flushing WAL to disk."},
	{Name: "commit_siblings", Type: Int, Boot: "5", Min: 0, Max: 1000, Context: User, Category: catWALSettings,
		Short: "Sets the minimum number of concurrent open transactions required before performing commit_delay."},
	{Name: "checkpoint_timeout", Type: Int, Unit: "s", Boot: "300", Min: 30, Max: 86400, Context: Sighup, Category: catCheckpoints,
		Short: "Sets the maximum time between automatic WAL checkpoints."},
	{Name: "checkpoint_completion_target", Type: Real, Boot: "0.9", Min: 0, Max: 1, Context: Sighup, Category: catCheckpoints,
		Short: "Time spent flushing dirty buffers during checkpoint, as fraction of checkpoint interval."},
	{Name: "checkpoint_warning", Type: Int, Unit: "s", Boot: "30", Min: 0, Max: intMax, Context: Sighup, Category: catCheckpoints,
		Short: "Sets the maximum time before warning if checkpoints triggered by WAL volume happen too frequently.",
		Extra: "Write a message to the server log if checkpoints caused by the filling of WAL segment files happen more frequently than this amount of time. Zero turns off the warning."},
	{Name: "max_wal_size", Type: Int, Unit: "MB", Boot: "1024", Min: 2, Max: intMax, Context: Sighup, Category: catCheckpoints,
		Short: "Sets the WAL size that triggers a checkpoint."},
	{Name: "min_wal_size", Type: Int, Unit: "MB", Boot: "80", Min: 2, Max: intMax, Context: Sighup, Category: catCheckpoints,
		Short: "Sets the minimum size to shrink the WAL to."},

	// --- Statistics and logging
	{Name: "track_lock_timing", Type: Bool, Boot: "on", Context: Sighup, Category: catStats,
		Short: "Collects timing statistics for lock waits.",
		Extra: "Waits are always counted; this adds their duration per tranche or lock type and mode."},
	{Name: "track_wal_io_timing", Type: Bool, Boot: "off", Context: Superuser, Category: catStats,
		Short: "Collects timing statistics for WAL I/O activity.",
		Extra: "Only pg_stat_wal's times; lockd's /metrics always has the WAL write and sync time histograms."},
	{Name: "metrics_listen_address", Type: String, Boot: "127.0.0.1:9188", Context: Postmaster, Category: catMonitoring,
		Short: "Sets the host:port the Prometheus /metrics endpoint listens on.",
		Extra: "An empty string disables the endpoint."},
	{Name: "metrics_web_config_file", Type: String, Boot: "", Context: Postmaster, Category: catMonitoring,
		Short: "Sets the web configuration file of the metrics endpoint.",
		Extra: "The format Prometheus exporters share (exporter-toolkit): tls_server_config for HTTPS and client certificates, basic_auth_users with bcrypt hashes. Read again for every connection and request. Empty: plain HTTP without authentication."},
	{Name: "debug_profiles", Type: Bool, Boot: "off", Context: Postmaster, Category: catMonitoring,
		Short: "Serves Go's runtime profiles under /debug/pprof/ on the metrics endpoint.",
		Extra: "For go tool pprof under load (CPU, heap, allocations, goroutines, mutexes); anyone who can reach the endpoint can read them."},
	{Name: "log_min_messages", Type: Enum, Boot: "warning", EnumValues: serverMessageLevels, Context: Superuser, Category: catWhenLog,
		Short: "Sets the message levels that are logged.",
		Extra: "Each level includes all the levels that follow it. The later the level, the fewer messages are sent."},
	{Name: "log_lock_waits", Type: Bool, Boot: "off", Context: Superuser, Category: catWhatLog,
		Short: "Logs long lock waits."},
	{Name: "log_checkpoints", Type: Bool, Boot: "on", Context: Sighup, Category: catWhatLog,
		Short: "Logs each checkpoint."},
	{Name: "log_connections", Type: Bool, Boot: "off", Context: SuperuserBackend, Category: catWhatLog,
		Short: "Logs each successful connection."},
	{Name: "log_disconnections", Type: Bool, Boot: "off", Context: SuperuserBackend, Category: catWhatLog,
		Short: "Logs end of a session, including duration."},
	{Name: "application_name", Type: String, Boot: "", Context: User, Category: catWhatLog, Reported: true,
		Short: "Sets the application name to be reported in statistics and logs.",
		check: checkApplicationName},

	// --- File locations (set by the server, not in files)
	{Name: "data_directory", Type: String, Boot: "", Context: Postmaster, Category: catFiles,
		Short: "Sets the server's data directory.",
		flags: flagDisallowInFile | flagNotInSample},
	{Name: "config_file", Type: String, Boot: "", Context: Postmaster, Category: catFiles,
		Short: "Sets the server's main configuration file.",
		flags: flagDisallowInFile | flagNotInSample},

	// --- Preset options
	{Name: "server_version", Type: String, Boot: "15.0 (lockd)", Context: Internal, Category: catPreset, Reported: true,
		Short: "Shows the server version."},
	{Name: "server_version_num", Type: Int, Boot: "150000", Min: 150000, Max: 150000, Context: Internal, Category: catPreset,
		Short: "Shows the server version as an integer."},
	{Name: "server_encoding", Type: String, Boot: "UTF8", Context: Internal, Category: catPreset, Reported: true,
		Short: "Shows the server (database) character set encoding."},
	{Name: "integer_datetimes", Type: Bool, Boot: "on", Context: Internal, Category: catPreset, Reported: true,
		Short: "Shows whether datetimes are integer based."},
	{Name: "in_hot_standby", Type: Bool, Boot: "off", Context: Internal, Category: catPreset, Reported: true,
		Short: "Shows whether hot standby is currently active."},
	{Name: "max_identifier_length", Type: Int, Boot: "63", Min: 63, Max: 63, Context: Internal, Category: catPreset,
		Short: "Shows the maximum identifier length."},
	{Name: "block_size", Type: Int, Boot: "8192", Min: 8192, Max: 8192, Context: Internal, Category: catPreset,
		Short: "Shows the size of a disk block."},
	{Name: "wal_block_size", Type: Int, Boot: "8192", Min: 8192, Max: 8192, Context: Internal, Category: catPreset,
		Short: "Shows the block size in the write ahead log."},
	{Name: "wal_segment_size", Type: Int, Unit: "B", Boot: "16777216", Min: 1048576, Max: 1073741824, Context: Internal, Category: catPreset,
		Short: "Shows the size of write ahead log segments."},
	{Name: "max_function_args", Type: Int, Boot: "100", Min: 100, Max: 100, Context: Internal, Category: catPreset,
		Short: "Shows the maximum number of function arguments."},
	{Name: "data_checksums", Type: Bool, Boot: "off", Context: Internal, Category: catPreset,
		Short: "Shows whether data checksums are turned on for this cluster."},
	{Name: "lc_collate", Type: String, Boot: "C", Context: Internal, Category: catPreset,
		Short: "Shows the collation order locale."},
	{Name: "lc_ctype", Type: String, Boot: "C", Context: Internal, Category: catPreset,
		Short: "Shows the character classification and case conversion locale."},
	{Name: "is_superuser", Type: Bool, Boot: "on", Context: Internal, Category: catUngrouped, Reported: true,
		Short: "Shows whether the current user is a superuser.",
		flags: flagNoShowAll | flagNoResetAll | flagNotInSample | flagDisallowInFile},
	{Name: "session_authorization", Type: String, Boot: "", Context: User, Category: catUngrouped, Reported: true,
		Short: "Sets the session user name.",
		flags: flagNoShowAll | flagNoResetAll | flagNotInSample | flagDisallowInFile},
}

var (
	// byName maps canonical and lower-case names to Table indexes.
	byName = map[string]int{}
	// sortedIdx is Table's indexes sorted by name, case-insensitively.
	sortedIdx []int
	// reportedIdx is the indexes of Reported settings, in Table order.
	reportedIdx []int
)

func init() {
	for i := range Table {
		d := &Table[i]
		d.idx = i
		lower := strings.ToLower(d.Name)
		if _, dup := byName[lower]; dup {
			panic("guc: duplicate setting " + d.Name)
		}
		byName[lower] = i
		byName[d.Name] = i
		v, err := parseValue(d, d.Boot)
		if err != nil {
			panic(fmt.Sprintf("guc: boot value of %s: %v", d.Name, err))
		}
		d.boot = v
		if d.Reported {
			reportedIdx = append(reportedIdx, i)
		}
		sortedIdx = append(sortedIdx, i)
	}
	sort.Slice(sortedIdx, func(a, b int) bool {
		return strings.ToLower(Table[sortedIdx[a]].Name) < strings.ToLower(Table[sortedIdx[b]].Name)
	})
}

// index returns the Table index of name (case-insensitive). The common case,
// a canonical or lower-case name, does not allocate.
func index(name string) (int, bool) {
	if i, ok := byName[name]; ok {
		return i, true
	}
	i, ok := byName[lowerASCII(name)]
	return i, ok
}

// mustIndex is index for names that the program, not a user, supplies.
func mustIndex(name string) int {
	i, ok := index(name)
	if !ok {
		panic("guc: unknown setting " + name)
	}
	return i
}

// Lookup returns the definition of the setting name (case-insensitive).
func Lookup(name string) (*Def, bool) {
	i, ok := index(name)
	if !ok {
		return nil, false
	}
	return &Table[i], true
}

// NoEffect is the extra description of the PostgreSQL settings lockd accepts
// but does not implement.
const NoEffect = "Accepted for compatibility with PostgreSQL 15; has no effect in lockd."

// withPG15 returns own followed by the settings of pg that own does not
// define, marked as having no effect in lockd and left out of
// lockd.conf.example.
func withPG15(own, pg []Def) []Def {
	have := map[string]bool{}
	for i := range own {
		have[strings.ToLower(own[i].Name)] = true
	}
	out := append([]Def(nil), own...)
	for _, d := range pg {
		if have[strings.ToLower(d.Name)] {
			continue
		}
		d.Extra = NoEffect
		d.flags |= flagNotInSample
		d.enumAliases = pgEnumAliases(&d)
		out = append(out, d)
	}
	return out
}

// pgEnumAliases returns the spellings PostgreSQL accepts for an enum setting
// besides those pg_settings lists: the Boolean words for enums that have
// "on" and "off" values, and wal_level's pre-9.6 names.
func pgEnumAliases(d *Def) map[string]string {
	if d.Type != Enum {
		return nil
	}
	if d.Name == "wal_level" {
		return map[string]string{"archive": "replica", "hot_standby": "replica"}
	}
	on, off := false, false
	for _, v := range d.EnumValues {
		on = on || v == "on"
		off = off || v == "off"
	}
	if !on || !off {
		return nil
	}
	return map[string]string{"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off"}
}
