// SQLite 3 from Debian (libsqlite3-dev), plus what Swift cannot import from its header.
#ifndef SWIPED_CSQLITE_SHIM_H
#define SWIPED_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer: Swift cannot import it.
static inline sqlite3_destructor_type swiped_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type swiped_sqlite_static(void) { return SQLITE_STATIC; }

/// Turns off SQLite's memory statistics (sqlite3_config is variadic: Swift cannot call it).
/// With them on, every allocation SQLite makes takes one process-wide mutex, a lock and an
/// unlock per malloc on the log writer's path; swiped never reads the statistics. Only
/// allowed before SQLite is initialized (SQLITE_MISUSE after).
static inline int swiped_sqlite_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif
