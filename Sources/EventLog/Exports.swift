// The log's values (events, durability, the log's id) live in LogTypes, which the PostgreSQL store
// shares without SQLite; EventLog's users keep them with `import EventLog`.
@_exported import LogTypes
